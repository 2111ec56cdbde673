"""The broker's network layer (Kafka's `SocketServer`): the listener, one task per connection, framing.

Each connection is served one request at a time, in order (Kafka answers a connection's requests in
the order they came): read a size-prefixed frame (refused over `socket.request.max.bytes`), decode the
header and body, hand the request to the request handler (KafkaApis), write the response frame with
the request's correlation id. Requests are processed only once the broker has registered
(`start_processing_requests`): Kafka binds early but starts its processors after registering, so a
broker waiting out its predecessor's session never tells clients the cluster has no brokers.

A request whose client is over its quota (the handler sets its context's throttle time) is answered at
once; the connection then reads nothing more until the throttle time has passed (Kafka mutes the
channel, KIP-219).

On a SASL_PLAINTEXT listener a connection first authenticates (`sasl_server_authenticator`); its requests
then carry the authenticated principal (`User:<name>`), a failed authentication closes it.

On the wire, as Kafka: an ApiVersions request above our versions is answered at v0 with
UNSUPPORTED_VERSION; a request for an API the broker does not serve, or one that does not decode,
closes the connection; a Produce with acks=0 gets no response. A connection's failure never reaches
the broker.

Threads: everything runs on the broker's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Collection
from typing import Any, Protocol

from kafkaops.cluster.broker import sasl_config
from kafkaops.cluster.broker.config import BrokerConfig
from kafkaops.cluster.broker.credential_provider import CredentialProvider
from kafkaops.cluster.broker.request_channel import RequestContext
from kafkaops.cluster.broker.sasl_server_authenticator import (
    AuthenticationFailed,
    SaslListenerSettings,
    authenticate,
)
from kafkaops.cluster.common.errors import KafkaProtocolError
from kafkaops.cluster.common.kafka_principal import ANONYMOUS, KafkaPrincipal
from kafkaops.cluster.protocol.framing import read_frame, write_frame
from kafkaops.cluster.protocol.messages import (
    Request,
    api_versions_refusal,
    decode_request,
    encode_response,
    is_unsupported_api_versions,
)
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.values import EndPoint
from kafkaops.cluster.zk.znodes import sanitize_entity_name

log = logging.getLogger("kafkaops.broker")

LISTENER_BUFFER_LIMIT = 1 << 20


class RequestHandler(Protocol):
    """What the network layer hands requests to (KafkaApis)."""

    @property
    def served(self) -> Collection[ApiKey]: ...

    async def handle(self, request: Request, context: RequestContext | None = None) -> dict[str, Any] | None:
        """The response body, or None for a request that gets no response; sets `context.throttle_time_ms`
        to have the connection muted."""


class SocketServer:
    """The PLAINTEXT listener of one broker (the first of `listeners`)."""

    def __init__(
        self, config: BrokerConfig, handler: RequestHandler, credentials: CredentialProvider | None = None
    ) -> None:
        self.config = config
        self.handler = handler
        self._server: asyncio.AbstractServer | None = None
        self._processing = asyncio.Event()
        listener = config.listeners[0].listener
        self.listener_name = listener
        self.security_protocol = config.listener_security_protocol_map.get(listener, "PLAINTEXT")
        self.sasl: SaslListenerSettings | None = None
        if sasl_config.is_sasl(self.security_protocol):
            self.sasl = SaslListenerSettings(
                sasl_config.enabled_mechanisms(config, listener),
                (credentials or CredentialProvider()).lookup,
                sasl_config.listener_plain_users(config, listener),
            )

    async def startup(self) -> tuple[EndPoint, ...]:
        """Bind the listener; returns the endpoints to register (the advertised listener if set, with the
        bound port when the configured one is 0)."""
        listener = self.config.listeners[0]
        self._server = await asyncio.start_server(
            self._serve_connection,
            host=listener.host or "127.0.0.1",
            port=listener.port,
            limit=LISTENER_BUFFER_LIMIT,
        )
        port = self._server.sockets[0].getsockname()[1]
        advertised = (self.config.advertised_listeners or self.config.listeners)[0]
        return (EndPoint(listener.listener, advertised.host or listener.host or "127.0.0.1", advertised.port or port),)

    def start_processing_requests(self) -> None:
        """From now on, requests are read and handled (connections accepted before wait until then)."""
        self._processing.set()

    async def shutdown(self) -> None:
        """Stop accepting connections (open ones end with the loop's tasks, see KafkaServer)."""
        if self._server is not None:
            self._server.close()

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._processing.wait()
            served = self.handler.served
            loop = asyncio.get_running_loop()
            peer = writer.get_extra_info("peername")
            client_host = peer[0] if isinstance(peer, tuple) else ""
            principal = ANONYMOUS
            if self.sasl is not None:
                principal = await authenticate(reader, writer, self.sasl, self._api_versions_during_sasl)
            sanitized_user = sanitize_entity_name(principal.name)
            while True:
                payload = await read_frame(reader, self.config.socket_request_max_bytes)
                if payload is None:
                    break
                request = decode_request(payload)  # a malformed request closes the connection
                header = request.header
                context = self._context(len(payload), principal, sanitized_user, client_host)
                body: dict[str, Any] | None
                if is_unsupported_api_versions(header):
                    body, version = api_versions_refusal(), 0
                else:
                    if header.api_key not in served:
                        break  # Kafka closes the connection on an API it does not serve
                    body, version = await self.handler.handle(request, context), header.api_version
                unmute_at = loop.time() + context.throttle_time_ms / 1000
                if body is not None:  # a Produce with acks=0 gets no response
                    write_frame(writer, encode_response(header.api_key, version, header.correlation_id, body))
                    await writer.drain()
                if context.throttle_time_ms > 0:
                    # Kafka's ThrottledChannel: the response goes out at once, then the channel is muted
                    # (nothing more is read from it) until the throttle time has passed
                    await asyncio.sleep(max(unmute_at - loop.time(), 0))
        except (
            AuthenticationFailed,
            KafkaProtocolError,
            ConnectionError,
            asyncio.IncompleteReadError,
            asyncio.CancelledError,
        ):
            pass  # a failed login, a bad peer, a closed peer, or our own shutdown: the connection just ends
        except Exception:  # noqa: BLE001 - one connection's failure must never take the broker down
            log.exception("Error serving a connection")
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _context(self, size: int, principal: KafkaPrincipal, sanitized_user: str, client_host: str) -> RequestContext:
        return RequestContext(
            size_in_bytes=size,
            sanitized_user=sanitized_user,
            principal=principal,
            client_host=client_host,
            listener_name=self.listener_name,
            security_protocol=self.security_protocol,
        )

    async def _api_versions_during_sasl(self, request: Request) -> dict[str, Any] | None:
        return await self.handler.handle(request, RequestContext(listener_name=self.listener_name))

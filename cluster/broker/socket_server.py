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

Listeners as Kafka's: one server per entry of `listeners`, each with its security protocol. An SSL (or
SASL_SSL) listener does the TLS handshake before anything is read (a client that does not speak TLS is
dropped by the handshake, with nothing left behind); the connection's principal is then its client
certificate's DN mapped by `ssl.principal.mapping.rules` (ANONYMOUS without one). Every request's
`RequestContext` carries the connection's listener name, security protocol, client host and principal.

On a SASL_PLAINTEXT or SASL_SSL listener a connection then authenticates (`sasl_server_authenticator`,
with the listener's enabled mechanisms and PLAIN users), once, before any request is served; its requests
carry the authenticated principal (`User:<name>`), and a failed authentication closes it.

On the wire, as Kafka: an ApiVersions request above our versions is answered at v0 with
UNSUPPORTED_VERSION; a request for an API the broker does not serve, or one that does not decode,
closes the connection; a Produce with acks=0 gets no response. A connection's failure never reaches
the broker.

Threads: everything runs on the broker's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import ssl
from collections.abc import Collection, Mapping
from typing import IO, Any, Protocol, cast

from kafkaops.cluster.broker import sasl_config
from kafkaops.cluster.broker.config import BrokerConfig
from kafkaops.cluster.broker.credential_provider import CredentialProvider
from kafkaops.cluster.broker.request_channel import RequestContext
from kafkaops.cluster.broker.sasl_server_authenticator import (
    AuthenticationFailed,
    SaslListenerSettings,
    authenticate,
)
from kafkaops.cluster.common.client_channel import TLS_PROTOCOLS
from kafkaops.cluster.common.errors import CorruptMessageError, KafkaProtocolError
from kafkaops.cluster.common.kafka_principal import ANONYMOUS
from kafkaops.cluster.common.ssl_factory import server_context, ssl_principal
from kafkaops.cluster.common.ssl_principal_mapper import NoMatchingRule, SslPrincipalMapper
from kafkaops.cluster.protocol.framing import FRAME_SIZE, read_frame, write_frame
from kafkaops.cluster.protocol.messages import (
    Request,
    api_versions_refusal,
    decode_request,
    encode_response,
    encode_response_parts,
    is_unsupported_api_versions,
)
from kafkaops.cluster.protocol.records_send import (
    TransferableRecords,
    close_parts,
    has_transferable,
    materialize,
    parts_size,
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


class ChannelAuthenticator(Protocol):
    """Authenticates a connection of a listener before its requests are served (SASL)."""


@dataclasses.dataclass(frozen=True)
class Listener:
    """One bound listener: its name and protocol, its TLS context and principal mapping rules (TLS only),
    its SASL settings (SASL only)."""

    name: str
    security_protocol: str
    ssl_context: ssl.SSLContext | None = None
    principal_mapper: SslPrincipalMapper | None = None
    sasl: SaslListenerSettings | None = None

    @property
    def sends_from_files(self) -> bool:
        """Whether Fetch records go from the segment to the socket with sendfile (not through TLS)."""
        return self.ssl_context is None


def registered_endpoints(config: BrokerConfig, bound_ports: Mapping[str, int]) -> tuple[EndPoint, ...]:
    """What the broker registers (Kafka's `createBrokerInfo`): the advertised listeners (else the listeners),
    a port of 0 replaced by the listener's bound port, an empty host by 127.0.0.1 (Kafka: the canonical host
    name; kafkaops listens on loopback by default)."""
    hosts = {e.listener: e.host for e in config.listeners}
    return tuple(
        EndPoint(
            e.listener,
            e.host or hosts.get(e.listener) or "127.0.0.1",
            e.port or bound_ports.get(e.listener, 0),
        )
        for e in config.effective_advertised_listeners
    )


async def send_response(
    writer: asyncio.StreamWriter,
    listener: Listener,
    api_key: int,
    version: int,
    correlation_id: int,
    body: Mapping[str, Any],
) -> None:
    """Write one response frame and drain. A Fetch's records that are slices of segment files
    (`TransferableRecords`) go from the file to the socket with sendfile, between the bytes of the fields
    around them (Kafka's `FileRecords.writeTo`); on a TLS listener, where the kernel cannot encrypt them,
    they are read and written as bytes (the one place deciding this). A slice that came back shorter than
    promised (its file was truncated since) raises CorruptMessageError: the frame is broken, and the
    connection is closed, as Kafka closes it."""
    if api_key != ApiKey.FETCH:
        write_frame(writer, encode_response(api_key, version, correlation_id, body))
        await writer.drain()
        return
    parts = encode_response_parts(api_key, version, correlation_id, body)
    try:
        if not listener.sends_from_files or not has_transferable(parts):
            write_frame(writer, materialize(parts))
        else:
            writer.write(FRAME_SIZE.pack(parts_size(parts)))
            for part in parts:
                if isinstance(part, TransferableRecords):
                    await _send_file_records(writer, part)
                else:
                    writer.write(part)
        await writer.drain()
    finally:
        close_parts(parts)


async def _send_file_records(writer: asyncio.StreamWriter, records: TransferableRecords) -> None:
    """`records` onto the connection after what is queued on it, with sendfile where the event loop has
    it (asyncio's selector loop), else read and written."""
    size = len(records)
    sendfile = getattr(asyncio.get_running_loop(), "sendfile", None)  # an event loop may lack it (uvloop)
    try:
        if sendfile is None:
            raise NotImplementedError
        sent = await sendfile(writer.transport, cast(IO[bytes], records), records.position, size, fallback=False)
    except (NotImplementedError, asyncio.SendfileNotAvailableError):
        writer.write(records.read_bytes())
        return
    except RuntimeError:
        if writer.transport.is_closing():
            raise
        writer.write(records.read_bytes())  # a transport without native sendfile
        return
    if sent != size:
        raise CorruptMessageError(f"Size of FileRecords has been truncated during write: {sent} of {size} bytes sent")


class SocketServer:
    """The listeners of one broker, one asyncio server each (Kafka's `SocketServer` with its acceptors)."""

    def __init__(
        self,
        config: BrokerConfig,
        handler: RequestHandler,
        credentials: CredentialProvider | None = None,
    ) -> None:
        self.config = config
        self.handler = handler
        self.credentials = credentials or CredentialProvider()
        self._servers: list[asyncio.AbstractServer] = []
        self._connections: set[asyncio.Task[None]] = set()
        self._processing = asyncio.Event()
        self.bound_ports: dict[str, int] = {}

    def _listener(self, endpoint: EndPoint) -> Listener:
        """Raises InvalidConfigurationError for a store that does not load."""
        protocol = self.config.security_protocol(endpoint.listener)
        sasl = None
        if sasl_config.is_sasl(protocol):
            sasl = SaslListenerSettings(
                sasl_config.enabled_mechanisms(self.config, endpoint.listener),
                self.credentials.lookup,
                sasl_config.listener_plain_users(self.config, endpoint.listener),
            )
        if protocol not in TLS_PROTOCOLS:
            return Listener(endpoint.listener, protocol, sasl=sasl)
        ssl_config = self.config.ssl_config(endpoint.listener)
        return Listener(endpoint.listener, protocol, server_context(ssl_config), ssl_config.principal_mapper, sasl)

    async def startup(self) -> tuple[EndPoint, ...]:
        """Bind every listener; returns the endpoints to register (`registered_endpoints`). Raises
        InvalidConfigurationError (nothing stays bound)."""
        listeners = [(endpoint, self._listener(endpoint)) for endpoint in self.config.listeners]
        try:
            for endpoint, listener in listeners:
                server = await asyncio.start_server(
                    functools.partial(self._serve_connection, listener=listener),
                    host=endpoint.host or "127.0.0.1",
                    port=endpoint.port,
                    limit=LISTENER_BUFFER_LIMIT,
                    ssl=listener.ssl_context,
                )
                self._servers.append(server)
                self.bound_ports[endpoint.listener] = server.sockets[0].getsockname()[1]
        except BaseException:
            await self.shutdown()
            raise
        return registered_endpoints(self.config, self.bound_ports)

    def start_processing_requests(self) -> None:
        """From now on, requests are read and handled (connections accepted before wait until then)."""
        self._processing.set()

    async def shutdown(self) -> None:
        """Stop accepting connections (`stop_processing_requests` ends the open ones too)."""
        for server in self._servers:
            server.close()
        self._servers.clear()

    async def stop_processing_requests(self) -> None:
        """Kafka's `stopProcessingRequests`, a broker's first step once its controlled shutdown is over:
        no connection is accepted and no request read any more, and a request being handled ends at its
        next wait, unanswered, as in Kafka. Without it the leaving broker went on serving its followers'
        fetches and applied the LeaderAndIsr that made it a follower (0.4 s at 10,000 partitions) before
        its replica manager could shut down."""
        await self.shutdown()
        connections = list(self._connections)
        for task in connections:
            task.cancel()
        await asyncio.gather(*connections, return_exceptions=True)

    async def _connection_context(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, listener: Listener
    ) -> RequestContext:
        """The connection's identity (Kafka's channel principal): TLS's, then the authenticator's."""
        peer = writer.get_extra_info("peername")
        principal = ANONYMOUS
        ssl_object = writer.get_extra_info("ssl_object")
        if ssl_object is not None and listener.principal_mapper is not None:
            principal = ssl_principal(ssl_object.getpeercert(binary_form=True), listener.principal_mapper)
        context = RequestContext(
            principal=principal,
            client_host=str(peer[0]) if peer else "",
            listener_name=listener.name,
            security_protocol=listener.security_protocol,
        )
        if listener.sasl is not None:
            context.principal = await authenticate(
                reader, writer, listener.sasl, functools.partial(self._api_versions_during_sasl, listener=listener)
            )
        # the quotas name users as their znodes do (Kafka's `Sanitizer.sanitize` of the principal's name)
        context.sanitized_user = sanitize_entity_name(context.principal.name)
        return context

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, listener: Listener
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            await self._processing.wait()
            connection = await self._connection_context(reader, writer, listener)
            served = self.handler.served
            loop = asyncio.get_running_loop()
            while True:
                payload = await read_frame(reader, self.config.socket_request_max_bytes)
                if payload is None:
                    break
                request = decode_request(payload)  # a malformed request closes the connection
                header = request.header
                context = dataclasses.replace(connection, size_in_bytes=len(payload))
                body: dict[str, Any] | None
                if is_unsupported_api_versions(header):
                    body, version = api_versions_refusal(), 0
                else:
                    if header.api_key not in served:
                        break  # Kafka closes the connection on an API it does not serve
                    body, version = await self.handler.handle(request, context), header.api_version
                unmute_at = loop.time() + context.throttle_time_ms / 1000
                if body is not None:  # a Produce with acks=0 gets no response
                    await send_response(writer, listener, header.api_key, version, header.correlation_id, body)
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
        except (NoMatchingRule, ssl.SSLError) as error:
            log.info("Closing connection from %s: %s", writer.get_extra_info("peername"), error)
        except Exception:  # noqa: BLE001 - one connection's failure must never take the broker down
            log.exception("Error serving a connection")
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _api_versions_during_sasl(self, request: Request, listener: Listener) -> dict[str, Any] | None:
        return await self.handler.handle(
            request, RequestContext(listener_name=listener.name, security_protocol=listener.security_protocol)
        )

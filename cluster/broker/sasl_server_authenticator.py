"""The server side of a SASL_PLAINTEXT / SASL_SSL connection before its first request (Kafka's
`SaslServerAuthenticator`): ApiVersions (once, first), SaslHandshake, then the mechanism's tokens.

    HANDSHAKE_OR_VERSIONS_REQUEST --ApiVersions--> HANDSHAKE_REQUEST --SaslHandshake--> AUTHENTICATE --> COMPLETE
                                  \\------------------SaslHandshake------------------/

After a SaslHandshake v1 each token comes in a SaslAuthenticate request (KIP-152) and its answer in the
response; after a v0 handshake tokens are raw size-prefixed frames, as before KIP-152. A failure is
answered (SASL_AUTHENTICATION_FAILED with Kafka's message, UNSUPPORTED_SASL_MECHANISM with the enabled
mechanisms) and the connection closed; a request of another API, or garbage, closes it at once (Kafka's
ILLEGAL_SASL_STATE). `connections.max.reauth.ms` (KIP-368) is not implemented: SessionLifetimeMs is 0.

Threads: the broker's event loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkaops.cluster.common.errors import (
    IllegalSaslStateError,
    KafkaProtocolError,
    SaslAuthenticationFailedError,
    UnsupportedSaslMechanismError,
)
from kafkaops.cluster.common.kafka_principal import USER_TYPE, KafkaPrincipal
from kafkaops.cluster.common.sasl import SaslServer, ScramCredentials, create_sasl_server
from kafkaops.cluster.common.scram import SaslException
from kafkaops.cluster.protocol.framing import read_frame, write_frame
from kafkaops.cluster.protocol.messages import (
    Request,
    api_versions_refusal,
    decode_request,
    encode_response,
    is_unsupported_api_versions,
)
from kafkaops.cluster.protocol.schemas import ApiKey

log = logging.getLogger("kafkaops.broker")

MAX_RECEIVE_SIZE = 524288
"""`SaslServerAuthenticator.MAX_RECEIVE_SIZE`: no SASL token is bigger."""


@dataclass(frozen=True)
class SaslListenerSettings:
    """What one SASL listener authenticates with: `sasl.enabled.mechanisms` (its `listener.name.<l>.`
    override), the PLAIN users of its login module, and the broker's SCRAM credential cache."""

    enabled_mechanisms: Sequence[str]
    scram_credentials: ScramCredentials
    plain_users: Mapping[str, str] = field(default_factory=dict)


class AuthenticationFailed(Exception):
    """The exchange failed (the answer, if any, was sent): the connection is to be closed."""


ApiVersionsHandler = Callable[[Request], Awaitable[dict[str, Any] | None]]


async def authenticate(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    settings: SaslListenerSettings,
    api_versions: ApiVersionsHandler,
) -> KafkaPrincipal:
    """Run the exchange; the principal is `User:<authorization id>` (Kafka's DefaultKafkaPrincipalBuilder).
    Raises AuthenticationFailed, or what the connection raises (closed peer, bad frame)."""
    seen_api_versions = False
    while True:
        request = _decode(await _read(reader))
        header = request.header
        if header.api_key == ApiKey.API_VERSIONS and not seen_api_versions:
            if is_unsupported_api_versions(header):  # the client asks again, lower: that one counts
                write_frame(
                    writer, encode_response(ApiKey.API_VERSIONS, 0, header.correlation_id, api_versions_refusal())
                )
                await writer.drain()
                continue
            seen_api_versions = True
            await _answer(writer, request, await api_versions(request))
            continue
        if header.api_key != ApiKey.SASL_HANDSHAKE:
            log.info("Unexpected Kafka request of type %s during SASL handshake.", header.api_key.name)
            raise AuthenticationFailed(f"Unexpected Kafka request of type {header.api_key.name} during SASL handshake.")
        break
    mechanism = request.body["mechanism"]
    enabled = list(settings.enabled_mechanisms)
    if mechanism not in enabled:
        await _answer(writer, request, {"error_code": UnsupportedSaslMechanismError.code, "mechanisms": enabled})
        raise AuthenticationFailed(f"Unsupported SASL mechanism {mechanism}")
    try:
        server = create_sasl_server(mechanism, settings.plain_users, settings.scram_credentials)
    except SaslException as error:  # enabled but not implemented (GSSAPI, OAUTHBEARER)
        await _answer(writer, request, {"error_code": UnsupportedSaslMechanismError.code, "mechanisms": enabled})
        raise AuthenticationFailed(str(error)) from error
    await _answer(writer, request, {"error_code": 0, "mechanisms": enabled})
    if header.api_version >= 1:
        await _authenticate_requests(reader, writer, server, mechanism)
    else:
        await _authenticate_raw_tokens(reader, writer, server, mechanism)
    return KafkaPrincipal(USER_TYPE, server.authorization_id)


async def _authenticate_requests(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: SaslServer, mechanism: str
) -> None:
    """KIP-152: each token in a SaslAuthenticate request, each answer in its response."""
    while not server.complete:
        request = _decode(await _read(reader))
        if request.header.api_key != ApiKey.SASL_AUTHENTICATE:
            raise AuthenticationFailed(
                f"Unexpected Kafka request of type {request.header.api_key.name} during SASL authentication."
            )
        try:
            token = server.evaluate_response(request.body["auth_bytes"])
        except SaslAuthenticationFailedError as error:
            await _answer(writer, request, _authenticate_failure(error.message))
            raise AuthenticationFailed(error.message) from error
        except SaslException as error:
            text = (
                "Authentication failed during authentication due to invalid credentials with SASL mechanism "
                + mechanism
            )
            log.info("Failed authentication with %s (%s)", _peer(writer), error)
            await _answer(writer, request, _authenticate_failure(text))
            raise AuthenticationFailed(text) from error
        await _answer(
            writer, request, {"error_code": 0, "error_message": None, "auth_bytes": token, "session_lifetime_ms": 0}
        )


async def _authenticate_raw_tokens(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: SaslServer, mechanism: str
) -> None:
    """After a v0 handshake: size-prefixed tokens both ways; a failure just closes the connection."""
    while not server.complete:
        token = await _read(reader)
        try:
            answer = server.evaluate_response(token)
        except (SaslAuthenticationFailedError, SaslException) as error:
            log.info("Failed authentication with %s (%s)", _peer(writer), error)
            raise AuthenticationFailed(str(error)) from error
        write_frame(writer, answer)
        await writer.drain()


def _authenticate_failure(message: str) -> dict[str, Any]:
    return {
        "error_code": SaslAuthenticationFailedError.code,
        "error_message": message,
        "auth_bytes": b"",
        "session_lifetime_ms": 0,
    }


async def _read(reader: asyncio.StreamReader) -> bytes:
    payload = await read_frame(reader, MAX_RECEIVE_SIZE)
    if payload is None:
        raise AuthenticationFailed("The connection closed during SASL authentication")
    return payload


def _decode(payload: bytes) -> Request:
    try:
        return decode_request(payload)
    except KafkaProtocolError as error:  # Kafka: not a Kafka request, and GSSAPI is not enabled
        raise AuthenticationFailed(
            f"Exception handling first SASL packet from client, GSSAPI is not supported by server: {error}"
        ) from error


async def _answer(writer: asyncio.StreamWriter, request: Request, body: dict[str, Any] | None) -> None:
    if body is None:
        return
    header = request.header
    write_frame(writer, encode_response(header.api_key, header.api_version, header.correlation_id, body))
    await writer.drain()


def _peer(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    return f"/{peer[0]}" if isinstance(peer, tuple) else "unknown peer"


ILLEGAL_SASL_STATE = IllegalSaslStateError.code
"""What KafkaApis answers a SaslHandshake / SaslAuthenticate after authentication (or on a listener without SASL)."""

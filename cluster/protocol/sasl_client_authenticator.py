"""The client side of SASL (Kafka's `SaslClientAuthenticator`), for the tools' client and the brokers' own
connections (controller channel, replica fetchers, one-off requests): SaslHandshake with the mechanism of
`sasl.mechanism`, then the mechanism's tokens in SaslAuthenticate requests (KIP-152).

The exchange is a generator (`exchange`) that yields the requests to send and is sent their answers, so the
blocking and the asyncio connections drive the same logic (`authenticate_socket`, `authenticate_stream`).

A refusal is Kafka's error: SaslAuthenticationFailedError with the broker's message (a wrong password, an
unknown user), UnsupportedSaslMechanismError naming what the broker enables, IllegalSaslStateError from a
listener that does not speak SASL. None is retriable: a login that failed does not succeed on retry.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Generator, Mapping
from typing import Any

from kafkaops.cluster.common.client_channel import ClientChannel
from kafkaops.cluster.common.errors import (
    IllegalSaslStateError,
    SaslAuthenticationFailedError,
    UnsupportedSaslMechanismError,
    for_code,
    from_code,
)
from kafkaops.cluster.common.java_errors import default_message
from kafkaops.cluster.common.sasl import SaslClientLogin, create_sasl_client
from kafkaops.cluster.common.scram import SaslException
from kafkaops.cluster.protocol.framing import frame, read_frame, read_frame_blocking
from kafkaops.cluster.protocol.messages import RequestHeader, decode_response, encode_request
from kafkaops.cluster.protocol.schemas import ApiKey

Outgoing = tuple[ApiKey, dict[str, Any]]
Exchange = Generator[Outgoing, dict[str, Any], None]

SASL_VERSIONS = {ApiKey.SASL_HANDSHAKE: 1, ApiKey.SASL_AUTHENTICATE: 1}
"""The versions a broker's own connections use (its peers are kafkaops brokers of the same release)."""

FINAL_ERRORS = (SaslAuthenticationFailedError, UnsupportedSaslMechanismError, IllegalSaslStateError)
"""The refusals that end a connection for good: callers do not retry them."""


def exchange(login: SaslClientLogin) -> Exchange:
    """Yields each request; is sent each answer. Raises the refusal's error."""
    handshake = yield ApiKey.SASL_HANDSHAKE, {"mechanism": login.mechanism}
    code = handshake["error_code"]
    if code == UnsupportedSaslMechanismError.code:
        raise UnsupportedSaslMechanismError(
            f"Client SASL mechanism '{login.mechanism}' not enabled in the server, enabled mechanisms are "
            f"{handshake['mechanisms']}",
            named=False,
        )
    if code == IllegalSaslStateError.code:
        raise IllegalSaslStateError(
            f"Unexpected handshake request with client mechanism {login.mechanism}, enabled mechanisms are "
            f"{handshake['mechanisms']}",
            named=False,
        )
    if code:
        raise from_code(code)
    client = create_sasl_client(login)
    token = client.first_message()
    while True:
        answer = yield ApiKey.SASL_AUTHENTICATE, {"auth_bytes": token}
        if answer["error_code"]:
            # the broker's message alone, as Kafka's clients raise it (SaslAuthenticationException)
            code = answer["error_code"]
            raise for_code(code)(answer.get("error_message") or default_message(code), named=False)
        try:
            token = client.evaluate_challenge(answer["auth_bytes"])
        except SaslException as error:
            raise SaslAuthenticationFailedError(
                f"An error: ({error}) occurred when evaluating SASL token received from the Kafka Broker.",
                named=False,
            ) from error
        if client.complete:
            return


def authenticate(send: Callable[[ApiKey, Mapping[str, Any]], dict[str, Any]], login: SaslClientLogin) -> None:
    """Drive the exchange with a blocking `send` (one request, its answer)."""
    steps = exchange(login)
    outgoing = next(steps)
    try:
        while True:
            outgoing = steps.send(send(*outgoing))
    except StopIteration:
        return


def authenticate_socket(sock: socket.socket, login: SaslClientLogin, client_id: str) -> None:
    """On a blocking socket just connected to a kafkaops broker's SASL listener."""
    correlation_ids = iter(range(1, 1 << 31))

    def send(api_key: ApiKey, body: Mapping[str, Any]) -> dict[str, Any]:
        version = SASL_VERSIONS[api_key]
        sock.sendall(frame(encode_request(RequestHeader(api_key, version, next(correlation_ids), client_id), body)))
        return decode_response(api_key, version, read_frame_blocking(sock))[1]

    authenticate(send, login)


async def authenticate_stream(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, login: SaslClientLogin, client_id: str
) -> None:
    """On an asyncio connection just made to a kafkaops broker's SASL listener."""
    steps = exchange(login)
    api_key, body = next(steps)
    correlation_id = 0
    try:
        while True:
            correlation_id += 1
            version = SASL_VERSIONS[api_key]
            writer.write(frame(encode_request(RequestHeader(api_key, version, correlation_id, client_id), body)))
            await writer.drain()
            payload = await read_frame(reader)
            if payload is None:
                raise ConnectionError("the broker closed the connection during SASL authentication")
            api_key, body = steps.send(decode_response(api_key, version, payload)[1])
    except StopIteration:
        return


def connect_channel(channel: ClientChannel, host: str, port: int, timeout_s: float, client_id: str) -> socket.socket:
    """A blocking connection of `channel` (TCP, TLS), logged in when the channel has a SASL login. Raises
    OSError, or the exchange's errors (authentication failures); the socket is closed on failure."""
    sock = channel.connect(host, port, timeout_s)
    if channel.sasl is not None:
        try:
            authenticate_socket(sock, channel.sasl, client_id)
        except BaseException:
            sock.close()
            raise
    return sock


async def open_channel(
    channel: ClientChannel, host: str, port: int, client_id: str, limit: int = 1 << 20
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """An asyncio connection of `channel`, logged in when the channel has a SASL login (closed on failure)."""
    reader, writer = await channel.open_connection(host, port, limit)
    if channel.sasl is not None:
        try:
            await authenticate_stream(reader, writer, channel.sasl, client_id)
        except BaseException:
            writer.close()
            raise
    return reader, writer

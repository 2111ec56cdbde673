"""The broker's SASL exchange on a real loopback connection: KIP-152 framing after a v1 handshake, raw tokens
after v0, ApiVersions once before the handshake, and the refusals (an unknown mechanism, another API, a bad
token) answered as Kafka answers them, the connection closed after."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kafkaops.cluster.broker.sasl_server_authenticator import (
    AuthenticationFailed,
    SaslListenerSettings,
    authenticate,
)
from kafkaops.cluster.common.errors import (
    SaslAuthenticationFailedError,
    UnsupportedSaslMechanismError,
)
from kafkaops.cluster.common.kafka_principal import KafkaPrincipal
from kafkaops.cluster.common.sasl import SaslClientLogin
from kafkaops.cluster.common.scram import ScramMechanism, ScramSaslClient, generate_credential
from kafkaops.cluster.protocol.framing import frame, read_frame
from kafkaops.cluster.protocol.messages import Request, RequestHeader, decode_response, encode_request
from kafkaops.cluster.protocol.sasl_client_authenticator import authenticate_stream
from kafkaops.cluster.protocol.schemas import ApiKey

CREDENTIALS = {"alice": generate_credential(ScramMechanism.SCRAM_SHA_512, "alice-pw", 4096)}
SETTINGS = SaslListenerSettings(
    ("PLAIN", "SCRAM-SHA-512", "GSSAPI"), lambda mechanism: CREDENTIALS.get, {"paul": "paul-pw"}
)

Client = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[Any]]


async def api_versions(request: Request) -> dict[str, Any]:
    return {"error_code": 0, "api_keys": [], "throttle_time_ms": 0}


def exchange(client: Client) -> tuple[KafkaPrincipal | Exception, Any]:
    """Run the server side on a loopback connection and `client` against it: (the principal or the
    server's failure, what the client returned)."""

    async def main() -> tuple[KafkaPrincipal | Exception, Any]:
        outcome: asyncio.Future[KafkaPrincipal | Exception] = asyncio.get_running_loop().create_future()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                outcome.set_result(await authenticate(reader, writer, SETTINGS, api_versions))
            except AuthenticationFailed as error:
                outcome.set_result(error)
            finally:
                writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                returned = await client(reader, writer)
            finally:
                writer.close()
            return await asyncio.wait_for(outcome, 10), returned

    return asyncio.run(main())


async def send(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, key: ApiKey, version: int, body: dict[str, Any]
) -> dict[str, Any] | None:
    writer.write(frame(encode_request(RequestHeader(key, version, 7, "test"), body)))
    await writer.drain()
    payload = await read_frame(reader)
    return None if payload is None else decode_response(key, version, payload)[1]


@pytest.mark.parametrize(
    "login", [SaslClientLogin("SCRAM-SHA-512", "alice", "alice-pw"), SaslClientLogin("PLAIN", "paul", "paul-pw")]
)
def test_kip152_exchange_after_api_versions(login: SaslClientLogin) -> None:
    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert (await send(reader, writer, ApiKey.API_VERSIONS, 3, {}))["error_code"] == 0  # type: ignore[index]
        await authenticate_stream(reader, writer, login, "test")

    principal, _ = exchange(client)
    assert principal == KafkaPrincipal("User", login.username)


def test_v0_handshake_then_raw_tokens() -> None:
    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
        answer = await send(reader, writer, ApiKey.SASL_HANDSHAKE, 0, {"mechanism": "SCRAM-SHA-512"})
        assert answer == {"error_code": 0, "mechanisms": ["PLAIN", "SCRAM-SHA-512", "GSSAPI"]}
        scram = ScramSaslClient(ScramMechanism.SCRAM_SHA_512, "alice", "alice-pw")
        token = scram.first_message()
        while not scram.complete:
            writer.write(frame(token))
            await writer.drain()
            token = scram.evaluate_challenge(await read_frame(reader) or b"")
        return token

    principal, _ = exchange(client)
    assert principal == KafkaPrincipal("User", "alice")


def test_wrong_password_is_answered_then_closed() -> None:
    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Exception | None:
        try:
            await authenticate_stream(reader, writer, SaslClientLogin("SCRAM-SHA-512", "alice", "nope"), "t")
        except SaslAuthenticationFailedError as error:
            assert await reader.read() == b""  # closed by the broker
            return error
        return None

    failure, error = exchange(client)
    assert isinstance(failure, AuthenticationFailed)
    assert str(error) == (
        "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"
    )


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "GSSAPI"])
def test_mechanism_not_enabled_or_not_implemented(mechanism: str) -> None:
    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> dict[str, Any] | None:
        answer = await send(reader, writer, ApiKey.SASL_HANDSHAKE, 1, {"mechanism": mechanism})
        assert await reader.read() == b""
        return answer

    failure, answer = exchange(client)
    assert isinstance(failure, AuthenticationFailed)
    assert answer == {
        "error_code": UnsupportedSaslMechanismError.code,
        "mechanisms": ["PLAIN", "SCRAM-SHA-512", "GSSAPI"],
    }


@pytest.mark.parametrize(
    "requests",
    [
        [(ApiKey.METADATA, 9, {"topics": None})],  # before the handshake
        [(ApiKey.API_VERSIONS, 3, {}), (ApiKey.API_VERSIONS, 3, {})],  # twice
        [(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}), (ApiKey.METADATA, 9, {"topics": None})],
    ],
)
def test_other_requests_close_the_connection(requests: list[tuple[ApiKey, int, dict[str, Any]]]) -> None:
    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> list[Any]:
        return [await send(reader, writer, *request) for request in requests]

    failure, answers = exchange(client)
    assert isinstance(failure, AuthenticationFailed)
    assert str(failure).startswith("Unexpected Kafka request of type ")
    assert answers[-1] is None


def test_client_learns_the_mechanism_is_not_enabled() -> None:
    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Exception | None:
        try:
            await authenticate_stream(reader, writer, SaslClientLogin("SCRAM-SHA-256", "alice", "x"), "t")
        except UnsupportedSaslMechanismError as error:
            return error
        return None

    _, error = exchange(client)
    assert str(error) == (
        "Client SASL mechanism 'SCRAM-SHA-256' not enabled in the server, enabled mechanisms are "
        "['PLAIN', 'SCRAM-SHA-512', 'GSSAPI']"
    )

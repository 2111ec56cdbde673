"""Connections to brokers: one blocking socket per broker, its versions negotiated on connect.

Kafka's `NetworkClient` and `ClientUtils` for a client that sends one request at a time (or pipelines a
few with `send`/`receive`). A connection that fails is closed; the next request reconnects.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import socket
from collections.abc import Mapping, Sequence
from typing import Any

from kafkaops.cluster.common.client_channel import PLAINTEXT_CHANNEL, ClientChannel
from kafkaops.cluster.common.errors import (
    BrokerError,
    CorrelationIdMismatchError,
    CorruptMessageError,
    InvalidArgumentError,
    InvalidFrameError,
    NetworkExceptionError,
    RequestTimedOutError,
    UnsupportedVersionError,
    from_code,
)
from kafkaops.cluster.protocol import sasl_client_authenticator
from kafkaops.cluster.protocol.framing import CorrelationIds, check_correlation_id, frame, read_frame_blocking
from kafkaops.cluster.protocol.messages import RequestHeader, decode_response, encode_request
from kafkaops.cluster.protocol.schemas import SUPPORTED_VERSIONS, ApiKey


def _software_version() -> str:
    try:
        return importlib.metadata.version("kafkaops")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


CLIENT_SOFTWARE = {"client_software_name": "kafkaops", "client_software_version": _software_version()}
"""ApiVersions v3's client software (KIP-511), as brokers log and report it."""


def parse_bootstrap_servers(servers: str | Sequence[str]) -> list[tuple[str, int]]:
    """`host:port[,host:port...]` (or a list of them) as (host, port) pairs; IPv6 hosts in brackets.

    Raises InvalidArgumentError with Kafka's `ClientUtils.parseAndValidateAddresses` texts.
    """
    items = servers.split(",") if isinstance(servers, str) else list(servers)
    addresses = []
    for raw in items:
        item = raw.strip()
        if not item:
            continue
        host, sep, port_text = item.rpartition(":")
        host = host.removeprefix("[").removesuffix("]")
        if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise InvalidArgumentError(f"Invalid url in bootstrap.servers: {item}")
        addresses.append((host, int(port_text)))
    if not addresses:
        raise InvalidArgumentError("No resolvable bootstrap urls given in bootstrap.servers")
    return addresses


class NotSent(Exception):
    """The request never left: no connection could be made. Not a retry attempt (Kafka's NetworkClient
    does not send to a node that is not ready); wraps the error to raise if time runs out."""

    def __init__(self, error: BrokerError) -> None:
        super().__init__(str(error))
        self.error = error


class BrokerConnection:
    """One blocking connection to one broker; requests are answered in order, one at a time (or pipelined
    with send/receive). Any failure closes it; the next request reconnects."""

    def __init__(
        self,
        host: str,
        port: int,
        client_id: str,
        timeout_s: float,
        node: str,
        channel: ClientChannel = PLAINTEXT_CHANNEL,
    ) -> None:
        self.channel = channel
        """The security protocol's way in (TLS for SSL, the login for SASL); `security.protocol` of the client's
        settings."""
        self.host = host
        self.port = port
        self.client_id = client_id
        self.timeout_s = timeout_s
        self.node = node
        self._sock: socket.socket | None = None
        self._ids = CorrelationIds()
        self._in_flight: list[tuple[int, ApiKey, int]] = []
        self.versions: dict[int, tuple[int, int]] = {}

    def _unreachable(self, error: OSError) -> NotSent:
        return NotSent(
            NetworkExceptionError(
                f"Connection to node {self.node} ({self.host}:{self.port}) could not be established. "
                f"Broker may not be available. ({error})"
            )
        )

    def connect(self) -> None:
        if self._sock is not None:
            return
        try:
            # an SSL handshake that fails (a certificate not trusted, a plaintext port) is an OSError too
            self._sock = self.channel.connect(self.host, self.port, self.timeout_s)
        except OSError as error:
            raise self._unreachable(error) from error
        try:
            self.versions = self._api_versions()
        except BrokerError as error:
            self.close()
            raise NotSent(error) from error
        if self.channel.sasl is not None:  # after ApiVersions, as Kafka's clients log in
            try:
                sasl_client_authenticator.authenticate(self._negotiated_request, self.channel.sasl)
            except sasl_client_authenticator.FINAL_ERRORS:
                self.close()  # a refused login is final: raised as it is, never retried
                raise
            except BrokerError as error:
                self.close()
                raise NotSent(error) from error

    def _negotiated_request(self, api_key: ApiKey, body: Mapping[str, Any]) -> dict[str, Any]:
        return self.request(api_key, self.version(api_key), body, self.timeout_s)

    def _api_versions(self) -> dict[int, tuple[int, int]]:
        """ApiVersions at our newest version, as Kafka's NetworkClient asks: a broker that does not know it
        answers UNSUPPORTED_VERSION in a v0 body listing its own ApiVersions range (KIP-511), and we ask
        again at the highest version both speak (v0 if it listed none). The version we pick per API is
        then min(ours, the broker's)."""
        ours = SUPPORTED_VERSIONS[ApiKey.API_VERSIONS][1]
        body = self.request(ApiKey.API_VERSIONS, ours, CLIENT_SOFTWARE, self.timeout_s)
        if body["error_code"] == UnsupportedVersionError.code:
            theirs = [k["max_version"] for k in body["api_keys"] if k["api_key"] == ApiKey.API_VERSIONS]
            retry = min(ours, theirs[0]) if theirs else 0
            if retry < ours:
                body = self.request(ApiKey.API_VERSIONS, retry, CLIENT_SOFTWARE, self.timeout_s)
        if body["error_code"]:
            raise from_code(body["error_code"])
        return {k["api_key"]: (k["min_version"], k["max_version"]) for k in body["api_keys"]}

    def version(self, api_key: ApiKey) -> int:
        """The highest version both sides speak. Raises UnsupportedVersionError if there is none."""
        ours = SUPPORTED_VERSIONS[api_key]
        theirs = self.versions.get(int(api_key))
        if theirs is None or max(ours[0], theirs[0]) > min(ours[1], theirs[1]):
            served = "does not serve it" if theirs is None else f"serves v{theirs[0]}-{theirs[1]}"
            raise UnsupportedVersionError(
                f"Broker {self.node} ({self.host}:{self.port}) and this client have no {api_key.name} version in "
                f"common: we speak v{ours[0]}-{ours[1]}, the broker {served}"
            )
        return min(ours[1], theirs[1])

    def send(self, api_key: ApiKey, version: int, body: Mapping[str, Any], expect_response: bool = True) -> int:
        """Send one request; with `expect_response`, queue it for `receive`. Raises OSError on failure."""
        if self._sock is None:
            raise OSError("not connected")
        correlation_id = self._ids.next()
        header = RequestHeader(api_key, version, correlation_id, self.client_id)
        self._sock.settimeout(self.timeout_s)
        self._sock.sendall(frame(encode_request(header, body)))
        if expect_response:
            self._in_flight.append((correlation_id, api_key, version))
        return correlation_id

    def receive(self, timeout_s: float) -> dict[str, Any]:
        """The answer to the oldest request in flight. Raises OSError, InvalidFrameError, CorruptMessageError
        or CorrelationIdMismatchError; the caller closes the connection on any of them."""
        if self._sock is None:
            raise OSError("not connected")
        expected, api_key, version = self._in_flight.pop(0)
        self._sock.settimeout(timeout_s)
        received, body = decode_response(api_key, version, read_frame_blocking(self._sock))
        check_correlation_id(expected, received)
        return body

    def request(self, api_key: ApiKey, version: int, body: Mapping[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send and wait for the answer. Failures close the connection and raise NetworkExceptionError (or
        RequestTimedOutError when the answer did not come in time); both are retriable."""
        try:
            self.send(api_key, version, body)
            return self.receive(timeout_s)
        except TimeoutError as error:
            self.close()
            raise RequestTimedOutError(
                f"{api_key.name} to node {self.node} ({self.host}:{self.port}) got no answer in {timeout_s:.1f} s"
            ) from error
        except (OSError, InvalidFrameError, CorruptMessageError, CorrelationIdMismatchError) as error:
            self.close()
            raise NetworkExceptionError(
                f"Connection to node {self.node} ({self.host}:{self.port}) was lost while waiting for "
                f"{api_key.name}: {error}"
            ) from error

    def close(self) -> None:
        self._in_flight.clear()
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
            self._sock = None

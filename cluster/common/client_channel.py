"""How a client reaches a broker (Kafka's `ChannelBuilders.clientChannelBuilder`): a TCP connection, with
TLS for SSL and SASL_SSL. One object for the tools' `KafkaClient`, the controller's send threads, the
replica fetchers and a broker's rare calls to another broker, so every one of them speaks the protocol of
the listener it connects to.

`sasl` is the login for SASL_PLAINTEXT / SASL_SSL: `connect` / `open_connection` here only make the TCP
(and TLS) connection; `cluster/protocol/sasl_client_authenticator.py`'s `connect_channel` /
`open_channel` then log in over it (SaslHandshake + SaslAuthenticate), which needs the protocol's codec.

Errors: OSError (ssl.SSLError is one) when the connection or the TLS handshake fails.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafkaops.cluster.common.errors import InvalidConfigurationError
from kafkaops.cluster.common.sasl import SaslClientLogin
from kafkaops.cluster.common.ssl_factory import SslConfig, client_context

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
"""Kafka's `SecurityProtocol` names, in the order of their ids (0..3, as UpdateMetadata carries them)."""
TLS_PROTOCOLS = frozenset({"SSL", "SASL_SSL"})


def security_protocol_id(name: str) -> int:
    """`SecurityProtocol.id`: PLAINTEXT 0, SSL 1, SASL_PLAINTEXT 2, SASL_SSL 3."""
    return SECURITY_PROTOCOLS.index(name)


@dataclass(frozen=True)
class ClientChannel:
    security_protocol: str = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    sasl: SaslClientLogin | None = None

    def connect(self, host: str, port: int, timeout_s: float) -> socket.socket:
        """A blocking connection, TLS handshake done. Raises OSError."""
        sock = socket.create_connection((host, port), timeout=timeout_s)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.ssl_context is None:
            return sock
        try:
            return self.ssl_context.wrap_socket(sock, server_hostname=host)
        except BaseException:
            sock.close()
            raise

    async def open_connection(
        self, host: str, port: int, limit: int = 1 << 20
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """An asyncio connection, TLS handshake done. Raises OSError."""
        if self.ssl_context is None:
            return await asyncio.open_connection(host, port, limit=limit)
        return await asyncio.open_connection(host, port, limit=limit, ssl=self.ssl_context, server_hostname=host)


PLAINTEXT_CHANNEL = ClientChannel()


def client_channel(
    security_protocol: str, properties: Mapping[str, Any], sasl: SaslClientLogin | None = None
) -> ClientChannel:
    """The channel for `security_protocol` with the `ssl.*` settings among `properties` and, for SASL, the
    login. Raises InvalidConfigurationError (Kafka's texts)."""
    protocol = security_protocol.strip().upper()
    if protocol not in SECURITY_PROTOCOLS:
        raise InvalidConfigurationError(
            f"Invalid value {security_protocol} for configuration security.protocol: String must be one of: "
            + ", ".join(SECURITY_PROTOCOLS)
        )
    login = sasl if protocol.startswith("SASL_") else None
    if protocol not in TLS_PROTOCOLS:
        return ClientChannel(protocol, sasl=login)
    return ClientChannel(protocol, client_context(SslConfig.from_properties(properties)), login)

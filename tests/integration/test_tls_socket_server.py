"""The broker's network layer over TLS, in-process: a SocketServer with PLAINTEXT and SSL listeners in front
of a handler that records each request's context. What a connection is (listener, protocol, client host,
principal from the client certificate's DN through `ssl.principal.mapping.rules`) reaches the handlers;
a plaintext client on the TLS port never reaches them."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkaops.admin.kafka_client.connection import BrokerConnection, NotSent
from kafkaops.cluster.broker import responses
from kafkaops.cluster.broker.config import parse_broker_config
from kafkaops.cluster.broker.request_channel import RequestContext
from kafkaops.cluster.broker.socket_server import SocketServer
from kafkaops.cluster.common.client_channel import client_channel
from kafkaops.cluster.common.kafka_principal import ANONYMOUS, KafkaPrincipal
from kafkaops.cluster.local.certificates import create_ca, issue, write_private
from kafkaops.cluster.protocol.messages import Request
from kafkaops.cluster.protocol.schemas import ApiKey

PASSWORD = "pw"


class Recorder:
    served = frozenset({ApiKey.API_VERSIONS})

    def __init__(self) -> None:
        self.contexts: list[RequestContext] = []

    async def handle(self, request: Request, context: RequestContext | None = None) -> dict[str, Any] | None:
        assert context is not None
        self.contexts.append(context)
        return responses.api_versions_response(self.served)


def _server(tmp_path: Path, client_auth: str) -> tuple[SocketServer, Recorder, dict[str, int], Path, Path]:
    ca = create_ca()
    ca_file = tmp_path / "ca.pem"
    ca_file.write_bytes(ca.pem)
    broker_store = write_private(tmp_path / "broker.pem", issue(ca, "broker", PASSWORD, "brokers"))
    client_store = write_private(tmp_path / "alice.pem", issue(ca, "Alice", PASSWORD, "Clients", server=False))
    config = parse_broker_config(
        {
            "zookeeper.connect": "unused:2181",
            "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(broker_store),
            "ssl.key.password": PASSWORD,
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(ca_file),
            "ssl.client.auth": client_auth,
            "ssl.principal.mapping.rules": "RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/L,DEFAULT",
        }
    )
    recorder = Recorder()
    return SocketServer(config, recorder), recorder, {}, ca_file, client_store


@pytest.fixture
def served(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Recorder, dict[str, int], Path, Path]]:
    server, recorder, ports, ca_file, client_store = _server(tmp_path, getattr(request, "param", "requested"))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(server.startup(), loop).result(10)
        loop.call_soon_threadsafe(server.start_processing_requests)
        ports.update(server.bound_ports)
        yield recorder, ports, ca_file, client_store
    finally:
        asyncio.run_coroutine_threadsafe(server.shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def _ssl_properties(ca_file: Path, client_store: Path | None) -> dict[str, str]:
    properties = {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(ca_file)}
    if client_store is not None:
        properties.update(
            {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(client_store), "ssl.key.password": PASSWORD}
        )
    return properties


def _ask(port: int, properties: dict[str, str] | None) -> None:
    channel = client_channel("SSL" if properties is not None else "PLAINTEXT", properties or {})
    connection = BrokerConnection("127.0.0.1", port, "test", 10.0, "0", channel)
    try:
        connection.connect()  # ApiVersions on connect
    finally:
        connection.close()


def test_the_certificates_dn_mapped_by_the_rules_is_the_principal(served: Any) -> None:
    recorder, ports, ca_file, client_store = served
    _ask(ports["SSL"], _ssl_properties(ca_file, client_store))
    _ask(ports["SSL"], _ssl_properties(ca_file, None))  # ssl.client.auth=requested: no certificate, ANONYMOUS
    _ask(ports["PLAINTEXT"], None)
    seen = [(c.listener_name, c.security_protocol, c.principal, c.client_host) for c in recorder.contexts]
    assert seen == [
        ("SSL", "SSL", KafkaPrincipal("User", "alice@clients"), "127.0.0.1"),
        ("SSL", "SSL", ANONYMOUS, "127.0.0.1"),
        ("PLAINTEXT", "PLAINTEXT", ANONYMOUS, "127.0.0.1"),
    ]
    assert recorder.contexts[0].sanitized_user == "alice%40clients"


@pytest.mark.parametrize("served", ["required"], indirect=True)
def test_a_required_certificate_and_tls_itself_keep_other_clients_out(served: Any) -> None:
    recorder, ports, ca_file, _ = served
    with pytest.raises(NotSent):
        _ask(ports["SSL"], _ssl_properties(ca_file, None))
    request = struct.pack(">hhih", 18, 0, 1, -1)  # ApiVersions v0 in clear text
    with socket.create_connection(("127.0.0.1", ports["SSL"]), timeout=10) as sock:
        sock.sendall(struct.pack(">i", len(request)) + request)
        try:
            answer = sock.recv(4096)
        except ConnectionResetError:
            answer = b""
    assert answer == b""
    assert recorder.contexts == []

"""Listeners as Kafka's, and TLS: one 3-broker cluster for the module, every broker with a PLAINTEXT and an
SSL listener, inter-broker traffic on SSL with client certificates (`ssl.client.auth=required` on the SSL
listener, the brokers' own key store as their client certificate).

Real clients (kcat, confluent-kafka, kafka-python) produce and consume over SSL with a client certificate;
an RF 3 topic replicates over the SSL inter-broker listener; each listener answers Metadata with its own
endpoints; the registration is Kafka 2.8's; a plaintext client on the TLS port is dropped; a tool reaches
the SSL listener with `--command-config`; a Fetch answers the same bytes from the PLAINTEXT listener, which
sends records from the segment files with sendfile, as from the SSL one, which reads them.
"""

from __future__ import annotations

import json
import socket
import struct
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cluster.common.client_channel import PLAINTEXT_CHANNEL, ClientChannel, client_channel
from kafkaops.cluster.common.errors import NetworkExceptionError
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.security import CA_FILE, SSL_DIR, issue_client_keystore
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.local.zookeeper import LocalZooKeeper
from kafkaops.cluster.protocol.records import Record, build_batch, iter_batches
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from tests.cluster.clients_util import (
    confluent_consume,
    confluent_produce,
    kafka_python_consume,
    kafka_python_produce,
    kcat_consume,
    kcat_produce,
    log_batches,
    make_records,
    wait_partitions,
    wait_replicas_identical,
)
from tests.cluster.conftest import FAST

CLIENT_PASSWORD = "client-secret"


@dataclass(frozen=True)
class TlsCluster:
    local: LocalCluster
    zk_connect: str
    plaintext: dict[int, int]
    """Each broker's PLAINTEXT port."""
    ssl: dict[int, int]
    """Each broker's SSL port."""
    ca_file: Path
    client_store: Path
    """A client key store, CN=alice,OU=clients,O=kafkaops, signed by the cluster's CA."""

    @property
    def ssl_bootstrap(self) -> str:
        return f"127.0.0.1:{self.ssl[0]}"

    def client_properties(self) -> dict[str, str]:
        """Kafka client settings for the SSL listener, with the client certificate."""
        return {
            "security.protocol": "SSL",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(self.ca_file),
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(self.client_store),
            "ssl.key.password": CLIENT_PASSWORD,
        }


def _ports(local: LocalCluster, broker_id: int) -> dict[str, int]:
    config = (local.broker_dir(broker_id) / "broker.yaml").read_text()
    listeners = next(line for line in config.splitlines() if line.startswith("listeners:")).split(":", 1)[1]
    return {entry.split("://")[0].strip(): int(entry.rsplit(":", 1)[1]) for entry in listeners.split(",")}


@pytest.fixture(scope="module")
def tls(zookeeper_server: LocalZooKeeper, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsCluster]:
    local = LocalCluster(tmp_path_factory.mktemp("tls") / "cluster")
    zk_connect = f"{zookeeper_server.connect_string}/kafkaops-tls-{uuid.uuid4().hex[:12]}"
    try:
        local.up(
            brokers=3,
            zookeeper_connect=zk_connect,
            security="ssl",
            listener_names=["PLAINTEXT", "SSL"],
            broker_overrides={
                **FAST,
                "listener.name.ssl.ssl.client.auth": "required",
                "ssl.principal.mapping.rules": "RULE:^CN=([^,]*),OU=clients,.*$/$1/,DEFAULT",
            },
        )
        store = issue_client_keystore(local.state_dir, "alice", CLIENT_PASSWORD, "clients")
        ports = {b: _ports(local, b) for b in local.broker_ids()}
        yield TlsCluster(
            local,
            zk_connect,
            {b: p["PLAINTEXT"] for b, p in ports.items()},
            {b: p["SSL"] for b, p in ports.items()},
            local.state_dir / SSL_DIR / CA_FILE,
            store,
        )
    finally:
        for broker_id in local.broker_ids():
            local.stop_broker(broker_id, hard=True)


def _create_topic(tls: TlsCluster, topic: str, partitions: int = 1, replication: int = 3) -> None:
    with KafkaZkClient(tls.zk_connect) as zk:
        zk.create_topic(topic, {p: [(p + i) % 3 for i in range(replication)] for p in range(partitions)}, {})
        wait_partitions(zk, topic, partitions)


def test_registration_is_kafkas_with_every_endpoint(tls: TlsCluster) -> None:
    with KafkaZkClient(tls.zk_connect) as zk:
        data = zk.get(znodes.BrokerIdZNode.path(0))
    assert data is not None
    raw = data[0].decode()
    timestamp = json.loads(raw)["timestamp"]
    plain, secure = tls.plaintext[0], tls.ssl[0]
    # Kafka 2.8's BrokerIdZNode.encode (v5): the map of the advertised listeners, every endpoint, and host/port
    # of the PLAINTEXT one
    assert raw == (
        '{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT","SSL":"SSL"},'
        f'"endpoints":["PLAINTEXT://127.0.0.1:{plain}","SSL://127.0.0.1:{secure}"],'
        f'"jmx_port":-1,"features":{{}},"host":"127.0.0.1","timestamp":"{timestamp}","port":{plain},"version":5}}'
    )


def _brokers_seen(bootstrap: str, channel: ClientChannel = PLAINTEXT_CHANNEL) -> dict[int, tuple[str, int]]:
    """The brokers a Metadata answer names, once it names all three (the brokers' caches fill in after
    registration, from the controller's UpdateMetadata)."""

    def seen() -> dict[int, tuple[str, int]] | None:
        with KafkaClient(bootstrap, channel=channel) as client:
            brokers = {b: (n.host, n.port) for b, n in client.metadata([]).brokers.items()}
        return brokers if len(brokers) == 3 else None

    return wait_for(seen, 30, what=f"three brokers in the Metadata of {bootstrap}")


def test_each_listener_answers_metadata_with_its_own_endpoints(tls: TlsCluster) -> None:
    plain = _brokers_seen(f"127.0.0.1:{tls.plaintext[1]}")
    assert plain == {b: ("127.0.0.1", p) for b, p in tls.plaintext.items()}
    secure = _brokers_seen(tls.ssl_bootstrap, client_channel("SSL", tls.client_properties()))
    assert secure == {b: ("127.0.0.1", p) for b, p in tls.ssl.items()}


def _kcat_ssl(tls: TlsCluster) -> list[str]:
    return [
        *("-X", "security.protocol=SSL", "-X", f"ssl.ca.location={tls.ca_file}"),
        *("-X", f"ssl.certificate.location={tls.client_store}", "-X", f"ssl.key.location={tls.client_store}"),
        *("-X", f"ssl.key.password={CLIENT_PASSWORD}"),
    ]


def _confluent_ssl(tls: TlsCluster) -> dict[str, Any]:
    # confluent_produce/consume turn `_` into `.`: these are librdkafka's ssl.* names
    return {
        "security_protocol": "SSL",
        "ssl_ca_location": str(tls.ca_file),
        "ssl_certificate_location": str(tls.client_store),
        "ssl_key_location": str(tls.client_store),
        "ssl_key_password": CLIENT_PASSWORD,
    }


def _kafka_python_ssl(tls: TlsCluster) -> dict[str, Any]:
    return {
        "security_protocol": "SSL",
        "ssl_cafile": str(tls.ca_file),
        "ssl_certfile": str(tls.client_store),
        "ssl_keyfile": str(tls.client_store),
        "ssl_password": CLIENT_PASSWORD,
    }


def test_real_clients_produce_and_consume_over_ssl_with_client_certificates(tls: TlsCluster) -> None:
    """RF 3 on every broker: the followers fetch over the SSL inter-broker listener, mutually authenticated."""
    topic = "tls-clients"
    _create_topic(tls, topic)
    kcat_records = make_records(0, 5, "kcat", headers=())
    kcat_produce(tls.ssl_bootstrap, topic, kcat_records, extra=_kcat_ssl(tls))
    confluent_records = make_records(0, 5, "confluent")
    outcome = confluent_produce(tls.ssl_bootstrap, topic, confluent_records, **_confluent_ssl(tls))
    assert not outcome.errors, outcome.errors
    python_records = make_records(0, 5, "python")
    outcome = kafka_python_produce(tls.ssl_bootstrap, topic, python_records, **_kafka_python_ssl(tls))
    assert not outcome.errors, outcome.errors
    produced = kcat_records + confluent_records + python_records
    expect = {0: len(produced)}
    for consumed in (
        kcat_consume(tls.ssl_bootstrap, topic, [0], expect=expect, extra=_kcat_ssl(tls)),
        confluent_consume(tls.ssl_bootstrap, topic, [0], expect=expect, **_confluent_ssl(tls)),
        kafka_python_consume(tls.ssl_bootstrap, topic, [0], expect=expect, **_kafka_python_ssl(tls)),
    ):
        assert [(r.key, r.value) for r in consumed] == [(r.key, r.value) for r in produced]
    # the followers replicate over the SSL inter-broker listener: every replica is in sync
    with KafkaZkClient(tls.zk_connect) as zk:
        wait_partitions(zk, topic, 1, isr_size=3)
    wait_replicas_identical(tls.local, topic, 0, [0, 1, 2])
    assert len(log_batches(tls.local, 2, topic, 0)) >= 3


def _fetch(topic: str, positions: dict[int, int], max_bytes: int, partition_max_bytes: int) -> dict[str, Any]:
    return {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_bytes": max_bytes,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {
                        "partition": p,
                        "current_leader_epoch": -1,
                        "fetch_offset": offset,
                        "log_start_offset": -1,
                        "partition_max_bytes": partition_max_bytes,
                    }
                    for p, offset in positions.items()
                ],
            }
        ],
    }


def test_a_fetch_answers_the_same_bytes_from_the_file_as_through_tls(tls: TlsCluster) -> None:
    """The PLAINTEXT listener sends a Fetch's records from the segment files with sendfile, the SSL listener
    reads them into the response: the same multi-partition Fetch gets the same answer on both, each
    partition's records exactly its log's bytes from the fetch offset's batch, within the fetch's max bytes
    and the partition's."""
    topic = "tls-zero-copy"
    with KafkaZkClient(tls.zk_connect) as zk:
        zk.create_topic(topic, {p: [0] for p in range(3)}, {})
        wait_partitions(zk, topic, 3)
    with (
        KafkaClient(f"127.0.0.1:{tls.plaintext[0]}") as plain,
        KafkaClient(tls.ssl_bootstrap, channel=client_channel("SSL", tls.client_properties())) as secure,
    ):
        for n in range(30):  # 30 batches of about 5 KB in each partition (a Produce carries one per partition)
            produce = {
                "acks": 1,
                "timeout_ms": 10_000,
                "topic_data": [
                    {
                        "name": topic,
                        "partition_data": [
                            {
                                "index": p,
                                "records": build_batch(
                                    [Record(i, 1_700_000_000_000, b"k", bytes([65 + p]) * (900 + n)) for i in range(5)]
                                ),
                            }
                            for p in range(3)
                        ],
                    }
                ],
            }
            _, answer = plain.broker_request(0, ApiKey.PRODUCE, produce)
            assert [r["error_code"] for r in answer["responses"][0]["partition_responses"]] == [0, 0, 0]
        for positions, max_bytes in (({0: 0, 1: 0, 2: 0}, 150_000), ({0: 37, 1: 149, 2: 90}, 1 << 20)):
            body = _fetch(topic, positions, max_bytes, 64_000)
            version, sent = plain.broker_request(0, ApiKey.FETCH, body)
            assert secure.broker_request(0, ApiKey.FETCH, body) == (version, sent)
            answers = {a["partition"]: a for a in sent["responses"][0]["partition_responses"]}
            total = 0
            for p, offset in positions.items():
                assert answers[p]["error_code"] == 0
                record_set = answers[p]["record_set"]
                log = b"".join(bytes(b.data) for b in log_batches(tls.local, 0, topic, p))
                start = sum(len(b.data) for b in log_batches(tls.local, 0, topic, p) if b.header.last_offset < offset)
                assert 0 < len(record_set) <= 64_000
                assert record_set == log[start : start + len(record_set)]
                batches = list(iter_batches(record_set))  # whole batches only: a torn tail raises
                assert batches[0].header.base_offset <= offset <= batches[0].header.last_offset
                total += len(record_set)
            assert total <= max_bytes
            if max_bytes == 150_000:  # the third partition got only what the first two left of the budget
                assert len(answers[2]["record_set"]) < len(answers[0]["record_set"])


def test_a_plaintext_client_on_the_tls_port_is_dropped(tls: TlsCluster) -> None:
    # an ApiVersions v0 request in clear text: the TLS handshake fails and the broker closes the connection
    request = struct.pack(">hhih", 18, 0, 1, -1)
    with socket.create_connection(("127.0.0.1", tls.ssl[2]), timeout=10) as sock:
        sock.sendall(struct.pack(">i", len(request)) + request)
        try:
            answer = sock.recv(4096)
        except ConnectionResetError:
            answer = b""
    assert answer == b""
    # and a client without a certificate is refused where one is required
    without_certificate = {k: v for k, v in tls.client_properties().items() if "keystore" not in k and "key." not in k}
    channel = client_channel("SSL", without_certificate)
    with KafkaClient(f"127.0.0.1:{tls.ssl[2]}", channel=channel) as client, pytest.raises(NetworkExceptionError):
        client.metadata([])
    # the broker goes on serving
    assert sorted(_brokers_seen(f"127.0.0.1:{tls.plaintext[2]}")) == [0, 1, 2]


def test_a_tool_reaches_the_ssl_listener_with_command_config(tls: TlsCluster, run_cli: Any, tmp_path: Path) -> None:
    properties = tmp_path / "client.properties"
    properties.write_text("".join(f"{k}={v}\n" for k, v in tls.client_properties().items()))
    common = ("--bootstrap-server", tls.ssl_bootstrap, "--command-config", str(properties))
    created = run_cli("topics", *common, "--create", "--topic", "tls-tool", "--partitions", "2")
    assert (created.exit_code, created.stdout) == (0, "Created topic tls-tool.\n")
    listed = run_cli("topics", *common, "--list")
    assert "tls-tool" in listed.stdout.splitlines()


def test_cluster_up_security_ssl_and_the_tools_find_its_client_properties(
    run_cli: Any, zk_connect: str, tmp_path: Path
) -> None:
    state = tmp_path / "secured"
    local = LocalCluster(state)
    try:
        up = run_cli(
            "cluster", "up", "--state-dir", str(state), "--brokers", "1", "--zookeeper", zk_connect, "--security", "ssl"
        )
        assert up.exit_code == 0, up.stdout
        properties = state / "client.properties"
        assert properties.read_text() == (
            f"security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={state / 'ssl' / 'ca.pem'}\n"
        )
        assert f"Client properties: {properties}" in up.stdout.splitlines()
        ports = _ports(local, 0)
        assert list(ports) == ["SSL"]  # every listener SSL, inter-broker too
        with KafkaZkClient(zk_connect) as zk:
            registration = zk.get_broker(0)
        assert registration is not None and registration.listener_security_protocol_map == {"SSL": "SSL"}
        server = f"127.0.0.1:{ports['SSL']}"
        # no --command-config: the tool takes the cluster's client.properties
        created = run_cli(
            "topics", "--bootstrap-server", server, "--state-dir", str(state), "--create", "--topic", "up-ssl"
        )
        assert (created.exit_code, created.stdout) == (0, "Created topic up-ssl.\n")
        # without them a client speaks plaintext to a TLS port, and gets nowhere
        elsewhere = run_cli("topics", "--bootstrap-server", server, "--state-dir", str(tmp_path / "none"), "--list")
        assert elsewhere.exit_code == 1
    finally:
        for broker_id in local.broker_ids():
            local.stop_broker(broker_id, hard=True)


def test_console_tools_speak_ssl_with_their_client_properties(tls: TlsCluster, cli_env: dict[str, str]) -> None:
    from typer.testing import CliRunner

    from kafkaops.cli.app import app

    _create_topic(tls, "tls-console", replication=1)
    settings = [f"{k}={v}" for k, v in tls.client_properties().items()]
    produced = CliRunner().invoke(
        app,
        ["console-producer", "--bootstrap-server", tls.ssl_bootstrap, "--topic", "tls-console"]
        + [arg for setting in settings for arg in ("--producer-property", setting)],
        input="one\ntwo\n",
        env=cli_env,
        catch_exceptions=False,
    )
    assert produced.exit_code == 0, produced.output
    consumed = CliRunner().invoke(
        app,
        ["console-consumer", "--bootstrap-server", tls.ssl_bootstrap, "--topic", "tls-console", "--from-beginning"]
        + ["--max-messages", "2", "--timeout-ms", "20000"]
        + [arg for setting in settings for arg in ("--consumer-property", setting)],
        env=cli_env,
        catch_exceptions=False,
    )
    assert consumed.exit_code == 0, consumed.output
    assert consumed.stdout.splitlines()[:2] == ["one", "two"]


def test_a_secured_cluster_with_its_own_zookeeper_comes_back_up_after_down(run_cli: Any, tmp_path: Path) -> None:
    state = tmp_path / "own"
    local = LocalCluster(state)
    try:
        assert run_cli("cluster", "up", "--state-dir", str(state), "--brokers", "1", "--security", "ssl").exit_code == 0
        assert run_cli("cluster", "down", "--state-dir", str(state)).exit_code == 0
        again = run_cli("cluster", "up", "--state-dir", str(state))  # ZooKeeper too, and still SSL
        assert again.exit_code == 0, again.stdout
        assert "Security: ssl (every listener, inter-broker included, uses SSL)" in again.stdout.splitlines()
        server = f"127.0.0.1:{_ports(local, 0)['SSL']}"
        listed = run_cli("topics", "--bootstrap-server", server, "--state-dir", str(state), "--list")
        assert listed.exit_code == 0, listed.stdout
    finally:
        if local.exists():
            local.down()

"""`kafkaops cluster up --security sasl_ssl`: TLS then SASL on every listener, inter-broker included
(replication between the two brokers logs in as the admin user over TLS); kcat, confluent-kafka and
kafka-python produce and consume with SCRAM-SHA-512 and PLAIN over SASL_SSL, a wrong password is refused,
and the tools reach the cluster with the client.properties it wrote (its trust store included)."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.admin.configs import load_properties
from kafkaops.cluster.common.sasl import client_login
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.zookeeper import LocalZooKeeper
from kafkaops.cluster.zk.client import KafkaZkClient
from tests.cluster.clients_util import (
    KCAT,
    Rec,
    assert_consumed_exactly,
    confluent_consume,
    confluent_produce,
    kafka_python_consume,
    kafka_python_produce,
    make_records,
    wait_partitions,
    wait_replicas_identical,
)

ADMIN = "admin"


def run_kafkaops(*args: str) -> Any:
    """`kafkaops <args>` in this process (Typer's runner): exit_code, stdout, stderr."""
    from typer.testing import CliRunner

    from kafkaops.cli.app import app

    return CliRunner().invoke(app, list(args), catch_exceptions=False)


@dataclass(frozen=True)
class SaslSslCluster:
    local: LocalCluster
    bootstrap: str
    zk_connect: str
    password: str
    ca_file: str
    properties: Path

    def confluent(self, mechanism: str = "SCRAM-SHA-512", password: str | None = None) -> dict[str, Any]:
        return {
            "security.protocol": "SASL_SSL",
            "ssl.ca.location": self.ca_file,
            "sasl.mechanism": mechanism,
            "sasl.username": ADMIN,
            "sasl.password": password or self.password,
        }

    def kafka_python(self, mechanism: str = "SCRAM-SHA-512") -> dict[str, Any]:
        return {
            "security_protocol": "SASL_SSL",
            "ssl_cafile": self.ca_file,
            "sasl_mechanism": mechanism,
            "sasl_plain_username": ADMIN,
            "sasl_plain_password": self.password,
        }

    def kcat(self, *args: str, password: str | None = None, data: bytes = b"") -> subprocess.CompletedProcess[bytes]:
        assert KCAT is not None, "kcat is not installed"
        settings = {**self.confluent(password=password), "sasl.mechanisms": "SCRAM-SHA-512"}
        settings.pop("sasl.mechanism")
        command = [KCAT, "-b", self.bootstrap, *(a for k, v in settings.items() for a in ("-X", f"{k}={v}")), *args]
        return subprocess.run(command, input=data, capture_output=True, timeout=60, check=False)


@pytest.fixture(scope="module")
def sasl_ssl(zookeeper_server: LocalZooKeeper, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SaslSslCluster]:
    zk_connect = f"{zookeeper_server.connect_string}/kafkaops-sasl-ssl-{uuid.uuid4().hex[:12]}"
    state = tmp_path_factory.mktemp("sasl-ssl-cluster")
    local = LocalCluster(state)
    try:
        up = run_kafkaops(
            "cluster", "up", "--state-dir", str(state), "--zookeeper", zk_connect, "--brokers", "2",
            "--security", "sasl_ssl",
        )  # fmt: skip
        assert up.exit_code == 0, up.stderr
        assert "Security: sasl_ssl (every listener, inter-broker included, uses SASL_SSL)" in up.stdout
        properties = load_properties(state / "client.properties")
        assert properties["security.protocol"] == "SASL_SSL" and properties["ssl.truststore.type"] == "PEM"
        password = client_login(properties["sasl.mechanism"], properties["sasl.jaas.config"]).password
        yield SaslSslCluster(
            local,
            local.status().bootstrap_servers,
            zk_connect,
            password,
            properties["ssl.truststore.location"],
            state / "client.properties",
        )
    finally:
        for broker_id in local.broker_ids():
            local.stop_broker(broker_id, hard=True)


def test_clients_over_sasl_ssl_with_sasl_ssl_replication(sasl_ssl: SaslSslCluster) -> None:
    topic = f"sasl-ssl-{uuid.uuid4().hex[:8]}"
    with KafkaZkClient(sasl_ssl.zk_connect) as zk:
        admin_topics.create_topic(zk, topic, 1, 2, None, {}, rng=JavaRandom(1))
        wait_partitions(zk, topic, 1)
    done = sasl_ssl.kcat("-P", "-t", topic, "-p", "0", "-K", ":", "-X", "acks=all", data=b"k0:kcat-0\n")
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    confluent = make_records(0, 4, tag="confluent", headers=())
    assert confluent_produce(sasl_ssl.bootstrap, topic, confluent, **sasl_ssl.confluent("PLAIN")).errors == []
    python = make_records(0, 4, tag="python", headers=())
    assert kafka_python_produce(sasl_ssl.bootstrap, topic, python, **sasl_ssl.kafka_python()).errors == []
    expected = [Rec(0, b"k0", b"kcat-0"), *confluent, *python]
    got = confluent_consume(sasl_ssl.bootstrap, topic, [0], expect={0: len(expected)}, **sasl_ssl.confluent())
    assert_consumed_exactly(expected, got)
    got = kafka_python_consume(
        sasl_ssl.bootstrap, topic, [0], expect={0: len(expected)}, **sasl_ssl.kafka_python("PLAIN")
    )
    assert_consumed_exactly(expected, got)
    consumed = sasl_ssl.kcat("-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q", "-f", "%k:%s\\n")
    assert consumed.stdout.decode().splitlines()[0] == "k0:kcat-0"
    wait_replicas_identical(sasl_ssl.local, topic, 0, [0, 1])
    listed = run_kafkaops(
        "topics", "--bootstrap-server", sasl_ssl.bootstrap, "--command-config", str(sasl_ssl.properties), "--list"
    )
    assert listed.exit_code == 0 and topic in listed.stdout.splitlines(), listed.stderr


def test_wrong_password_over_sasl_ssl_is_refused(sasl_ssl: SaslSslCluster) -> None:
    done = sasl_ssl.kcat("-L", password="wrong")
    assert done.returncode != 0
    assert b"invalid credentials with SASL mechanism SCRAM-SHA-512" in done.stderr

"""SASL_PLAINTEXT on real brokers whose inter-broker traffic is SASL too (SCRAM-SHA-512 as the admin user):
kcat, confluent-kafka and kafka-python produce and consume with SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN; a
wrong password and an unknown user are refused and their connection closed; a user created with
`kafkaops configs --entity-type users` logs in at once, through ZooKeeper and through the Admin API.

One two-broker cluster for the module; each test has its own topic and users.
"""

from __future__ import annotations

import socket
import subprocess
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.admin.configs import alter_config, load_properties, parse_client_quota_entity
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cluster.common.client_channel import ClientChannel
from kafkaops.cluster.common.errors import SaslAuthenticationFailedError
from kafkaops.cluster.common.sasl import SaslClientLogin, client_login, jaas_config_text
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.local.zookeeper import LocalZooKeeper
from kafkaops.cluster.protocol.framing import frame, read_frame_blocking
from kafkaops.cluster.protocol.messages import RequestHeader, decode_response, encode_request
from kafkaops.cluster.protocol.schemas import ApiKey
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
ALICE, ALICE_PASSWORD = "alice", "alice-secret"
LISTENER = "SASL_PLAINTEXT"


@dataclass(frozen=True)
class SaslCluster:
    local: LocalCluster
    bootstrap: str
    zk_connect: str
    admin_password: str
    client_properties: Path
    up_output: str


def create_user(zk: KafkaZkClient, user: str, mechanism: str, password: str) -> None:
    entity = parse_client_quota_entity(["users"], [user], True)
    alter_config(zk, entity, {mechanism: f"iterations=4096,password={password}"}, [])


@pytest.fixture(scope="module")
def sasl_cluster(zookeeper_server: LocalZooKeeper, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SaslCluster]:
    """`kafkaops cluster up --security sasl_plaintext` with two brokers on a chroot of the session's ZooKeeper."""
    zk_connect = f"{zookeeper_server.connect_string}/kafkaops-sasl-{uuid.uuid4().hex[:12]}"
    state = tmp_path_factory.mktemp("sasl-cluster")
    local = LocalCluster(state)
    try:
        up = run_kafkaops(
            "cluster", "up", "--state-dir", str(state), "--zookeeper", zk_connect, "--brokers", "2",
            "--security", "sasl_plaintext",
        )  # fmt: skip
        assert up.returncode == 0, up.stderr
        properties = load_properties(state / "client.properties")
        password = client_login(properties["sasl.mechanism"], properties["sasl.jaas.config"]).password
        bootstrap = local.status().bootstrap_servers
        with KafkaZkClient(zk_connect) as zk:
            create_user(zk, ALICE, "SCRAM-SHA-256", ALICE_PASSWORD)
        wait_for(logs_in(bootstrap, "SCRAM-SHA-256", ALICE, ALICE_PASSWORD), 15, what="alice's login")
        yield SaslCluster(local, bootstrap, zk_connect, password, state / "client.properties", up.stdout)
    finally:
        for broker_id in local.broker_ids():
            local.stop_broker(broker_id, hard=True)


def new_topic(cluster: SaslCluster, partitions: int = 1) -> str:
    topic = f"sasl-{uuid.uuid4().hex[:8]}"
    with KafkaZkClient(cluster.zk_connect) as zk:
        admin_topics.create_topic(zk, topic, partitions, 2, None, {}, rng=JavaRandom(1))
        wait_partitions(zk, topic, partitions)
    return topic


def confluent_sasl(mechanism: str, user: str, password: str) -> dict[str, Any]:
    return {
        "security.protocol": LISTENER,
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": password,
    }


def kafka_python_sasl(mechanism: str, user: str, password: str) -> dict[str, Any]:
    return {
        "security_protocol": LISTENER,
        "sasl_mechanism": mechanism,
        "sasl_plain_username": user,
        "sasl_plain_password": password,
    }


def kcat(bootstrap: str, password: str, *args: str, user: str = ADMIN, data: bytes = b"") -> str:
    assert KCAT is not None, "kcat is not installed"
    command = [KCAT, "-b", bootstrap, "-X", f"security.protocol={LISTENER}", "-X", "sasl.mechanisms=SCRAM-SHA-512"]
    command += ["-X", f"sasl.username={user}", "-X", f"sasl.password={password}", *args]
    done = subprocess.run(command, input=data, capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout.decode()


def test_scram_sha_512_clients_produce_and_consume_with_sasl_replication(sasl_cluster: SaslCluster) -> None:
    topic, bootstrap = new_topic(sasl_cluster), sasl_cluster.bootstrap
    kcat(
        bootstrap,
        sasl_cluster.admin_password,
        "-P",
        "-t",
        topic,
        "-p",
        "0",
        "-K",
        ":",
        "-X",
        "acks=all",
        data=b"k0:kcat-0\nk1:kcat-1\n",
    )
    confluent = make_records(0, 5, tag="confluent", headers=())
    assert (
        confluent_produce(
            bootstrap, topic, confluent, **confluent_sasl("SCRAM-SHA-512", ADMIN, sasl_cluster.admin_password)
        ).errors
        == []
    )
    python = make_records(0, 5, tag="python", headers=())
    produced = kafka_python_produce(
        bootstrap, topic, python, **kafka_python_sasl("SCRAM-SHA-512", ADMIN, sasl_cluster.admin_password)
    )
    assert produced.errors == []
    expected = [Rec(0, b"k0", b"kcat-0"), Rec(0, b"k1", b"kcat-1"), *confluent, *python]
    got = confluent_consume(
        bootstrap,
        topic,
        [0],
        expect={0: len(expected)},
        **confluent_sasl("SCRAM-SHA-512", ADMIN, sasl_cluster.admin_password),
    )
    assert_consumed_exactly(expected, got)
    got = kafka_python_consume(
        bootstrap,
        topic,
        [0],
        expect={0: len(expected)},
        **kafka_python_sasl("SCRAM-SHA-512", ADMIN, sasl_cluster.admin_password),
    )
    assert_consumed_exactly(expected, got)
    lines = kcat(
        bootstrap,
        sasl_cluster.admin_password,
        "-C",
        "-t",
        topic,
        "-p",
        "0",
        "-o",
        "beginning",
        "-e",
        "-q",
        "-f",
        "%k:%s\\n",
    )
    assert lines.splitlines()[:2] == ["k0:kcat-0", "k1:kcat-1"] and len(lines.splitlines()) == len(expected)
    # the follower fetched every record over the inter-broker SASL listener
    wait_replicas_identical(sasl_cluster.local, topic, 0, [0, 1])


def test_scram_sha_256_user_and_plain(sasl_cluster: SaslCluster) -> None:
    topic, bootstrap = new_topic(sasl_cluster), sasl_cluster.bootstrap
    records = make_records(0, 3, tag="alice", headers=())
    outcome = kafka_python_produce(
        bootstrap, topic, records, **kafka_python_sasl("SCRAM-SHA-256", ALICE, ALICE_PASSWORD)
    )
    assert outcome.errors == []
    plain = make_records(0, 3, tag="plain", headers=())
    assert (
        confluent_produce(bootstrap, topic, plain, **confluent_sasl("PLAIN", ADMIN, sasl_cluster.admin_password)).errors
        == []
    )
    got = kafka_python_consume(
        bootstrap, topic, [0], expect={0: 6}, **kafka_python_sasl("PLAIN", ADMIN, sasl_cluster.admin_password)
    )
    assert_consumed_exactly([*records, *plain], got)


def login(bootstrap: str, mechanism: str, user: str, password: str) -> None:
    channel = ClientChannel("SASL_PLAINTEXT", sasl=SaslClientLogin(mechanism, user, password))
    with KafkaClient(bootstrap, retries=0, request_timeout_ms=10000, channel=channel) as c:
        c.metadata([])


def raw_login(address: str, mechanism: str, first_token: bytes) -> tuple[dict[str, Any], bytes]:
    """Handshake and one SaslAuthenticate on a bare socket; the answer and what the broker sends next."""
    host, port = address.split(",")[0].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        for correlation_id, (key, body) in enumerate(
            [(ApiKey.SASL_HANDSHAKE, {"mechanism": mechanism}), (ApiKey.SASL_AUTHENTICATE, {"auth_bytes": first_token})]
        ):
            sock.sendall(frame(encode_request(RequestHeader(key, 1, correlation_id, "raw"), body)))
            _, answer = decode_response(key, 1, read_frame_blocking(sock))
        return answer, sock.recv(1)


@pytest.mark.parametrize(
    ("mechanism", "user", "password", "message"),
    [
        ("SCRAM-SHA-512", ADMIN, "wrong", "invalid credentials with SASL mechanism SCRAM-SHA-512"),
        ("SCRAM-SHA-256", "nobody", "x", "invalid credentials with SASL mechanism SCRAM-SHA-256"),
        ("PLAIN", ADMIN, "wrong", "Authentication failed: Invalid username or password"),
        ("PLAIN", ALICE, ALICE_PASSWORD, "Authentication failed: Invalid username or password"),
    ],
)
def test_bad_credentials_are_refused(
    sasl_cluster: SaslCluster, mechanism: str, user: str, password: str, message: str
) -> None:
    with pytest.raises(SaslAuthenticationFailedError, match=message):
        login(sasl_cluster.bootstrap, mechanism, user, password)


def test_refused_connection_is_closed_and_clients_fail(sasl_cluster: SaslCluster) -> None:
    answer, after = raw_login(sasl_cluster.bootstrap, "PLAIN", b"\0admin\0wrong")
    assert answer["error_code"] == SaslAuthenticationFailedError.code
    assert answer["error_message"] == "Authentication failed: Invalid username or password"
    assert after == b""  # the broker closed the connection
    answer, after = raw_login(sasl_cluster.bootstrap, "SCRAM-SHA-512", b"n,,n=nobody,r=abc")
    assert answer["error_message"] == (
        "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"
    )
    assert after == b""
    from confluent_kafka import KafkaError, Producer

    errors: list[Any] = []
    settings = {"bootstrap.servers": sasl_cluster.bootstrap, "error_cb": errors.append}
    producer = Producer({**settings, **confluent_sasl("SCRAM-SHA-512", ADMIN, "bad")})

    def refused() -> bool:
        producer.poll(0.2)
        return any(error.code() == KafkaError._AUTHENTICATION for error in errors)

    wait_for(refused, 20, what="librdkafka's authentication error")
    assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in errors[-1].str()


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


def run_kafkaops(*args: str, stdin: str | None = None) -> Ran:
    """`kafkaops <args>` in this process (Typer's runner), as the tools' tests run it."""
    from typer.testing import CliRunner

    from kafkaops.cli.app import app

    result = CliRunner().invoke(app, list(args), input=stdin, catch_exceptions=False)
    return Ran(result.exit_code, result.stdout, result.stderr)


def logs_in(bootstrap: str, mechanism: str, user: str, password: str) -> Callable[[], bool]:
    def attempt() -> bool:
        try:
            login(bootstrap, mechanism, user, password)
        except SaslAuthenticationFailedError:
            return False
        return True

    return attempt


def test_user_created_with_configs_zookeeper_logs_in_at_once(sasl_cluster: SaslCluster) -> None:
    zk, bootstrap = ["--zookeeper", sasl_cluster.zk_connect], sasl_cluster.bootstrap
    user = f"carol-{uuid.uuid4().hex[:6]}"
    assert not logs_in(bootstrap, "SCRAM-SHA-256", user, "carol-pw")()
    done = run_kafkaops(
        "configs", *zk, "--alter", "--entity-type", "users", "--entity-name", user,
        "--add-config", "SCRAM-SHA-256=[iterations=8192,password=carol-pw],SCRAM-SHA-512=[password=carol-512]",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"Completed updating config for entity: user-principal '{user}'.\n"
    wait_for(logs_in(bootstrap, "SCRAM-SHA-256", user, "carol-pw"), 15, what="the new user's SCRAM-SHA-256 login")
    login(bootstrap, "SCRAM-SHA-512", user, "carol-512")
    described = run_kafkaops("configs", *zk, "--describe", "--entity-type", "users", "--entity-name", user)
    assert described.returncode == 0, described.stderr
    assert described.stdout.startswith(f"Configs for user-principal '{user}' are ")
    assert "SCRAM-SHA-256=salt=" in described.stdout and ",iterations=8192" in described.stdout
    assert "carol-pw" not in described.stdout
    done = run_kafkaops(
        "configs", *zk, "--alter", "--entity-type", "users", "--entity-name", user,
        "--delete-config", "SCRAM-SHA-256",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    wait_for(lambda: not logs_in(bootstrap, "SCRAM-SHA-256", user, "carol-pw")(), 15, what="the deleted credential")
    login(bootstrap, "SCRAM-SHA-512", user, "carol-512")


def write_client_properties(path: Path, mechanism: str, user: str, password: str) -> Path:
    path.write_text(
        f"security.protocol={LISTENER}\nsasl.mechanism={mechanism}\n"
        f"sasl.jaas.config={jaas_config_text(mechanism, user, password)}\n"
    )
    return path


def test_users_through_the_admin_api(sasl_cluster: SaslCluster, tmp_path: Path) -> None:
    config = write_client_properties(tmp_path / "admin.properties", "SCRAM-SHA-512", ADMIN, sasl_cluster.admin_password)
    server = ["--bootstrap-server", sasl_cluster.bootstrap, "--command-config", str(config)]
    user = f"dave-{uuid.uuid4().hex[:6]}"
    done = run_kafkaops(
        "configs", *server, "--alter", "--entity-type", "users", "--entity-name", user,
        "--add-config", "SCRAM-SHA-512=[iterations=8192,password=dave-pw]",
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, f"Completed updating config for user {user}.\n"), done.stderr
    wait_for(logs_in(sasl_cluster.bootstrap, "SCRAM-SHA-512", user, "dave-pw"), 15, what="the new user's login")
    described = run_kafkaops("configs", *server, "--describe", "--entity-type", "users", "--entity-name", user)
    assert (
        described.stdout == f"SCRAM credential configs for user-principal '{user}' are SCRAM-SHA-512=iterations=8192\n"
    )
    everyone = run_kafkaops("configs", *server, "--describe", "--entity-type", "users")
    assert f"SCRAM credential configs for user-principal '{ADMIN}' are SCRAM-SHA-512=iterations=4096" in everyone.stdout
    # the same user seen by the other clients' admin APIs, then removed by confluent-kafka's
    from confluent_kafka.admin import AdminClient, UserScramCredentialDeletion

    admin = AdminClient(
        {
            "bootstrap.servers": sasl_cluster.bootstrap,
            **confluent_sasl("SCRAM-SHA-512", ADMIN, sasl_cluster.admin_password),
        }
    )
    from confluent_kafka.admin import ScramMechanism as ConfluentScram

    description = admin.describe_user_scram_credentials([user])[user].result(timeout=30)
    infos = [(i.mechanism, i.iterations) for i in description.scram_credential_infos]
    assert infos == [(ConfluentScram.SCRAM_SHA_512, 8192)]
    futures = admin.alter_user_scram_credentials([UserScramCredentialDeletion(user, ConfluentScram.SCRAM_SHA_512)])
    futures[user].result(timeout=30)
    wait_for(lambda: not logs_in(sasl_cluster.bootstrap, "SCRAM-SHA-512", user, "dave-pw")(), 15, what="removal")
    gone = run_kafkaops("configs", *server, "--describe", "--entity-type", "users", "--entity-name", user)
    assert (gone.returncode, gone.stdout) == (0, "")


def test_confluent_and_kafka_python_create_users(sasl_cluster: SaslCluster) -> None:
    from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

    admin = AdminClient(
        {
            "bootstrap.servers": sasl_cluster.bootstrap,
            **confluent_sasl("SCRAM-SHA-512", ADMIN, sasl_cluster.admin_password),
        }
    )
    user = f"erin-{uuid.uuid4().hex[:6]}"
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096)
    futures = admin.alter_user_scram_credentials([UserScramCredentialUpsertion(user, info, b"erin-pw")])
    futures[user].result(timeout=30)
    wait_for(logs_in(sasl_cluster.bootstrap, "SCRAM-SHA-256", user, "erin-pw"), 15, what="confluent's new user")
    from kafka.admin import KafkaAdminClient

    python_admin = KafkaAdminClient(
        bootstrap_servers=sasl_cluster.bootstrap,
        **kafka_python_sasl("SCRAM-SHA-512", ADMIN, sasl_cluster.admin_password),
    )
    try:
        described = python_admin.describe_user_scram_credentials([user])
        assert described[user]["error"] is None
        assert [(int(i["mechanism"]), i["iterations"]) for i in described[user]["credential_infos"]] == [(1, 4096)]
    finally:
        python_admin.close()


def test_cluster_up_printed_its_usage_and_client_properties(sasl_cluster: SaslCluster) -> None:
    output, properties = sasl_cluster.up_output, sasl_cluster.client_properties
    assert "Security: sasl_plaintext (every listener, inter-broker included, uses SASL_PLAINTEXT)" in output
    assert f"Client properties: {properties}" in output
    assert (
        "-X security.protocol=SASL_PLAINTEXT -X sasl.mechanisms=SCRAM-SHA-512 -X sasl.username=admin "
        f"-X sasl.password={sasl_cluster.admin_password}"
    ) in output
    assert load_properties(properties) == {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": jaas_config_text("SCRAM-SHA-512", ADMIN, sasl_cluster.admin_password),
    }
    assert properties.stat().st_mode & 0o077 == 0
    topic = new_topic(sasl_cluster)
    listed = run_kafkaops(
        "topics", "--bootstrap-server", sasl_cluster.bootstrap, "--command-config", str(properties), "--list"
    )
    assert listed.returncode == 0 and topic in listed.stdout.splitlines(), listed.stderr
    # without the settings, or with a wrong password, a tool is refused
    refused = run_kafkaops("topics", "--bootstrap-server", sasl_cluster.bootstrap, "--list")
    assert refused.returncode == 1
    wrong = write_client_properties(properties.parent / "wrong.properties", "SCRAM-SHA-512", ADMIN, "wrong")
    refused = run_kafkaops(
        "topics", "--bootstrap-server", sasl_cluster.bootstrap, "--command-config", str(wrong), "--list"
    )
    assert refused.returncode == 1
    assert refused.stdout + refused.stderr == (
        "Error while executing topic command : Authentication failed during authentication due to invalid "
        "credentials with SASL mechanism SCRAM-SHA-512\n"
    )


def test_console_tools_with_sasl_settings(sasl_cluster: SaslCluster) -> None:
    topic, server = new_topic(sasl_cluster), ["--bootstrap-server", sasl_cluster.bootstrap, "--topic"]
    properties = load_properties(sasl_cluster.client_properties)
    settings = [arg for key, value in properties.items() for arg in ("--producer-property", f"{key}={value}")]
    produced = run_kafkaops("console-producer", *server, topic, *settings, stdin="one\ntwo\n")
    assert produced.returncode == 0, produced.stderr
    settings = [arg for key, value in properties.items() for arg in ("--consumer-property", f"{key}={value}")]
    consumed = run_kafkaops(
        "console-consumer",
        *server,
        topic,
        "--from-beginning",
        "--max-messages",
        "2",
        "--timeout-ms",
        "20000",
        *settings,
    )
    assert consumed.stdout.splitlines() == ["one", "two"], consumed.stderr

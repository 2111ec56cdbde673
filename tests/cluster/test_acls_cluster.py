"""The authorizer on real brokers: one 2-broker cluster for the file with
`authorizer.class.name=kafka.security.authorizer.AclAuthorizer` and `allow.everyone.if.no.acl.found=false`.

Every connection is PLAINTEXT, so brokers and clients are all User:ANONYMOUS: ANONYMOUS gets ClusterAction
on the cluster (what the brokers' requests to each other need, as super.users would give a broker's own
principal), and Alter and Describe on it (to manage ACLs through the Admin API), nothing else: so a client
without topic ACLs is refused what Kafka refuses it; `kafkaops acls`
then grants and denies, through ZooKeeper and through the Admin API, and each broker applies the change
from the notifications without a restart. Tests use topics of their own."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.acl_authorizer import AclAuthorizer
from kafkaops.cli.app import app
from kafkaops.cluster.broker.network_client import send_request
from kafkaops.cluster.common.acl import (
    CLUSTER_NAME,
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from kafkaops.cluster.common.sasl import jaas_config_text
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.local.zookeeper import LocalZooKeeper
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.client import KafkaZkClient
from tests.cluster.clients_util import confluent_produce, kafka_python_consume, make_records, wait_partitions
from tests.cluster.conftest import FAST

TOPIC_AUTHORIZATION_FAILED = 29
CLUSTER_AUTHORIZATION_FAILED = 31


@pytest.fixture(scope="module")
def secured(
    zookeeper_server: LocalZooKeeper, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LocalCluster, str]]:
    connect = f"{zookeeper_server.connect_string}/kafkaops-acls-{uuid.uuid4().hex[:12]}"
    with KafkaZkClient(connect) as zk:
        authorizer = AclAuthorizer(zk)
        authorizer.configure()
        cluster = ResourcePattern(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL)
        granted = [
            AclBinding(cluster, AccessControlEntry("User:ANONYMOUS", "*", operation, AclPermissionType.ALLOW))
            for operation in (AclOperation.CLUSTER_ACTION, AclOperation.ALTER, AclOperation.DESCRIBE)
        ]
        assert authorizer.create_acls(granted) == [None] * 3
    local = LocalCluster(tmp_path_factory.mktemp("acls-cluster"))
    try:
        local.up(
            brokers=2,
            zookeeper_connect=connect,
            broker_overrides={
                **FAST,
                "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
                "allow.everyone.if.no.acl.found": False,
                "super.users": "User:admin",
                "group.initial.rebalance.delay.ms": 0,
            },
        )
        yield local, connect
    finally:
        for broker_id in local.broker_ids():
            local.stop_broker(broker_id, hard=True)


def endpoints(local: LocalCluster) -> list[tuple[str, int]]:
    found = []
    for broker in local.status().brokers:
        host, _, port = (broker.endpoint or "").removeprefix("PLAINTEXT://").rpartition(":")
        found.append((host, int(port)))
    return found


def bootstrap(local: LocalCluster) -> str:
    return ",".join(f"{h}:{p}" for h, p in endpoints(local))


def ask(endpoint: tuple[str, int], key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
    return send_request(endpoint[0], endpoint[1], key, version, body, "acl-test", 10)


def metadata_error(endpoint: tuple[str, int], topic: str) -> int:
    """The topic's error in a Metadata answer naming it."""
    answer = ask(endpoint, ApiKey.METADATA, 9, {"topics": [{"name": topic}], "allow_auto_topic_creation": False})
    return int(answer["topics"][0]["error_code"])


def listed_by_all_topics(endpoint: tuple[str, int], topic: str) -> bool:
    answer = ask(endpoint, ApiKey.METADATA, 9, {"topics": None, "allow_auto_topic_creation": False})
    return topic in {t["name"] for t in answer["topics"]}


def produce_error(endpoint: tuple[str, int], topic: str) -> int:
    body = {
        "acks": 1,
        "timeout_ms": 5000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": None}]}],
    }
    answer = ask(endpoint, ApiKey.PRODUCE, 8, body)
    return int(answer["responses"][0]["partition_responses"][0]["error_code"])


def fetch_error(endpoint: tuple[str, int], topic: str) -> int:
    body = {
        "replica_id": -1,
        "max_wait_ms": 10,
        "min_bytes": 1,
        "max_bytes": 1024,
        "topics": [{"topic": topic, "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1024}]}],
    }
    answer = ask(endpoint, ApiKey.FETCH, 11, body)
    return int(answer["responses"][0]["partition_responses"][0]["error_code"])


def create_topic(connect: str, topic: str) -> None:
    with KafkaZkClient(connect) as zk:
        admin_topics.create_topic(zk, topic, 1, 2, None, {})
        wait_partitions(zk, topic, 1, isr_size=2)


def acls(*args: str) -> Any:
    return CliRunner().invoke(app, ["acls", *args], catch_exceptions=False)


def test_a_principal_without_acls_is_refused(secured: tuple[LocalCluster, str]) -> None:
    local, connect = secured
    topic = "no-acls"
    create_topic(connect, topic)
    for endpoint in endpoints(local):
        assert metadata_error(endpoint, topic) == TOPIC_AUTHORIZATION_FAILED
        assert not listed_by_all_topics(endpoint, topic)
        assert produce_error(endpoint, topic) == TOPIC_AUTHORIZATION_FAILED
        assert fetch_error(endpoint, topic) == TOPIC_AUTHORIZATION_FAILED
    controller = endpoints(local)[0]
    created = ask(
        controller,
        ApiKey.CREATE_TOPICS,
        5,
        {
            "topics": [
                {"name": "new-one", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}
            ],
            "timeout_ms": 5000,
        },
    )
    assert created["topics"][0]["error_code"] == TOPIC_AUTHORIZATION_FAILED
    deleted = ask(controller, ApiKey.DELETE_TOPICS, 4, {"topic_names": [topic], "timeout_ms": 5000})
    assert deleted["responses"][0]["error_code"] == TOPIC_AUTHORIZATION_FAILED
    coordinator = ask(controller, ApiKey.FIND_COORDINATOR, 2, {"key": "some-group", "key_type": 0})
    assert coordinator["error_code"] == 30  # GROUP_AUTHORIZATION_FAILED: no Describe on the group
    commit = {
        "group_id": "some-group",
        "generation_id": -1,
        "member_id": "",
        "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 1, "committed_metadata": ""}]}
        ],
    }
    committed = ask(controller, ApiKey.OFFSET_COMMIT, 2, commit)
    assert committed["topics"][0]["partitions"][0]["error_code"] == 30
    quotas = ask(controller, ApiKey.DESCRIBE_CLIENT_QUOTAS, 0, {"components": [], "strict": False})
    assert quotas["error_code"] == CLUSTER_AUTHORIZATION_FAILED  # DescribeConfigs on the cluster
    with KafkaZkClient(connect) as zk:
        assert zk.exists(f"/brokers/topics/{topic}") and not zk.exists("/brokers/topics/new-one")
    # the real clients see the same
    outcome = confluent_produce(bootstrap(local), topic, make_records(0, 2, tag="x"), **{"message.timeout.ms": 5000})
    assert not outcome.acked and "TOPIC_AUTHORIZATION_FAILED" in str(outcome.errors[0][1])
    from kafka import KafkaProducer
    from kafka.errors import TopicAuthorizationFailedError

    producer = KafkaProducer(bootstrap_servers=bootstrap(local), enable_idempotence=False, max_block_ms=5000)
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send(topic, b"v").get(timeout=10)
    finally:
        producer.close(timeout=1)


def test_producer_and_consumer_acls_let_it_work_and_a_deny_wins(secured: tuple[LocalCluster, str]) -> None:
    local, connect = secured
    topic = "granted"
    create_topic(connect, topic)
    zk_args = ("--authorizer-properties", f"zookeeper.connect={connect}")
    added = acls(*zk_args, "--add", "--producer", "--topic", topic, "--allow-principal", "User:ANONYMOUS")
    assert added.exit_code == 0, added.stdout
    # through the Admin API this time: a broker's authorizer writes the znode and the notification
    added = acls(
        "--bootstrap-server",
        bootstrap(local),
        "--add",
        "--consumer",
        "--topic",
        topic,
        "--group",
        "g",
        "--allow-principal",
        "User:ANONYMOUS",
    )
    assert added.exit_code == 0, added.stdout
    assert "operation=READ" in added.stdout and "operation=WRITE" in added.stdout  # the listing after adding
    for endpoint in endpoints(local):  # each broker from its own notification watch
        wait_for(
            lambda e=endpoint: fetch_error(e, topic) != TOPIC_AUTHORIZATION_FAILED and metadata_error(e, topic) == 0,
            what="READ granted",
        )
    outcome = confluent_produce(bootstrap(local), topic, make_records(0, 5, tag="ok"))
    assert len(outcome.acked) == 5 and not outcome.errors
    consumed = kafka_python_consume(bootstrap(local), topic, [0], expect={0: 5})
    assert [r.value for r in consumed] == [r.value for r in outcome.acked]
    # a deny on one operation wins over the allow, on every broker; removing it gives the access back
    denied = acls(*zk_args, "--add", "--deny-principal", "User:ANONYMOUS", "--operation", "Write", "--topic", topic)
    assert denied.exit_code == 0, denied.stdout
    for endpoint in endpoints(local):
        wait_for(lambda e=endpoint: produce_error(e, topic) == TOPIC_AUTHORIZATION_FAILED, what="deny applied")
        assert fetch_error(endpoint, topic) != TOPIC_AUTHORIZATION_FAILED  # a follower answers NOT_LEADER
    removed = acls(
        *zk_args, "--remove", "--force", "--deny-principal", "User:ANONYMOUS", "--operation", "Write", "--topic", topic
    )
    assert removed.exit_code == 0, removed.stdout
    for endpoint in endpoints(local):
        wait_for(lambda e=endpoint: produce_error(e, topic) != TOPIC_AUTHORIZATION_FAILED, what="deny removed")


def test_prefixed_acl_and_cluster_apis(secured: tuple[LocalCluster, str]) -> None:
    local, connect = secured
    create_topic(connect, "team-a.orders")
    added = acls(
        "--bootstrap-server",
        bootstrap(local),
        "--add",
        "--allow-principal",
        "User:ANONYMOUS",
        "--operation",
        "Describe",
        "--topic",
        "team-a.",
        "--resource-pattern-type",
        "prefixed",
    )
    assert added.exit_code == 0, added.stdout
    for endpoint in endpoints(local):
        wait_for(lambda e=endpoint: listed_by_all_topics(e, "team-a.orders"), what="prefixed Describe")
        assert produce_error(endpoint, "team-a.orders") == TOPIC_AUTHORIZATION_FAILED  # Describe is not Write
    broker_config = {"resource_type": 4, "resource_name": "0", "configs": []}
    altered = ask(
        endpoints(local)[0], ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [broker_config], "validate_only": True}
    )
    assert altered["responses"][0]["error_code"] == CLUSTER_AUTHORIZATION_FAILED  # AlterConfigs on the cluster
    listed = acls(
        "--bootstrap-server", bootstrap(local), "--list", "--topic", "team-a.orders", "--resource-pattern-type", "match"
    )
    assert "ResourcePattern(resourceType=TOPIC, name=team-a., patternType=PREFIXED)" in listed.stdout


# --- SASL: a super user and a restricted one --------------------------------------------------------------

ADMIN_PASSWORD = "admin-secret"


@pytest.fixture(scope="module")
def sasl_secured(
    zookeeper_server: LocalZooKeeper, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LocalCluster, str]]:
    """Two SASL_PLAINTEXT brokers whose inter-broker user `admin` is the super user (Kafka's usual set-up);
    `alice` has no ACLs."""
    from tests.cluster.test_sasl import ADMIN, ALICE, ALICE_PASSWORD, create_user

    connect = f"{zookeeper_server.connect_string}/kafkaops-acls-sasl-{uuid.uuid4().hex[:12]}"
    with KafkaZkClient(connect) as zk:
        zk.ensure_paths(["/config/users"])
        create_user(zk, ADMIN, "SCRAM-SHA-512", ADMIN_PASSWORD)
        create_user(zk, ALICE, "SCRAM-SHA-256", ALICE_PASSWORD)
    local = LocalCluster(tmp_path_factory.mktemp("acls-sasl-cluster"))
    try:
        overrides = {
            **FAST,
            "inter.broker.listener.name": "SASL_PLAINTEXT",
            "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
            "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
            "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": jaas_config_text(
                "SCRAM-SHA-512", ADMIN, ADMIN_PASSWORD
            ),
            "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
            "super.users": f"User:{ADMIN}",
        }
        local.up(brokers=2, zookeeper_connect=connect, broker_overrides=overrides)
        yield local, connect
    finally:
        for broker_id in local.broker_ids():
            local.stop_broker(broker_id, hard=True)


def test_sasl_super_user_and_restricted_user(sasl_secured: tuple[LocalCluster, str], tmp_path: Path) -> None:
    from tests.cluster.test_sasl import (
        ADMIN,
        ALICE,
        ALICE_PASSWORD,
        confluent_sasl,
        write_client_properties,
    )

    local, connect = sasl_secured
    servers = ",".join((b.endpoint or "").split("://", 1)[1] for b in local.status().brokers)
    topic = "sasl-acls"
    create_topic(connect, topic)
    as_admin = confluent_sasl("SCRAM-SHA-512", ADMIN, ADMIN_PASSWORD)
    as_alice = {**confluent_sasl("SCRAM-SHA-256", ALICE, ALICE_PASSWORD), "message.timeout.ms": 5000}
    assert confluent_produce(servers, topic, make_records(0, 2, tag="admin"), **as_admin).errors == []
    refused = confluent_produce(servers, topic, make_records(0, 1, tag="alice"), **as_alice)
    assert not refused.acked and "TOPIC_AUTHORIZATION_FAILED" in str(refused.errors[0][1])
    # the restricted user may not manage ACLs; the super user may, through the Admin API
    alice_config = write_client_properties(tmp_path / "alice.properties", "SCRAM-SHA-256", ALICE, ALICE_PASSWORD)
    admin_config = write_client_properties(tmp_path / "admin.properties", "SCRAM-SHA-512", ADMIN, ADMIN_PASSWORD)
    grant = ["--add", "--producer", "--topic", topic, "--allow-principal", f"User:{ALICE}"]
    denied = acls("--bootstrap-server", servers, "--command-config", str(alice_config), *grant)
    assert denied.exit_code == 1
    assert (
        "Error while executing ACL command: org.apache.kafka.common.errors.ClusterAuthorizationException"
        in denied.stdout
    )
    granted = acls("--bootstrap-server", servers, "--command-config", str(admin_config), *grant)
    assert granted.exit_code == 0, granted.stdout
    assert "(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)" in granted.stdout
    wait_for(
        lambda: not confluent_produce(servers, topic, make_records(0, 1, tag="alice"), **as_alice).errors,
        what="alice may write",
    )


def test_confluent_admin_client_manages_acls(sasl_secured: tuple[LocalCluster, str]) -> None:
    """librdkafka's CreateAcls, DescribeAcls and DeleteAcls against the brokers' authorizer, as the super user."""
    from confluent_kafka import admin as cadmin

    from tests.cluster.test_sasl import ADMIN, confluent_sasl

    local, _ = sasl_secured
    servers = ",".join((b.endpoint or "").split("://", 1)[1] for b in local.status().brokers)
    admin = cadmin.AdminClient({"bootstrap.servers": servers, **confluent_sasl("SCRAM-SHA-512", ADMIN, ADMIN_PASSWORD)})
    binding = cadmin.AclBinding(
        cadmin.ResourceType.GROUP,
        "reports-",
        cadmin.ResourcePatternType.PREFIXED,
        "User:bob",
        "*",
        cadmin.AclOperation.READ,
        cadmin.AclPermissionType.ALLOW,
    )
    for future in admin.create_acls([binding], request_timeout=60).values():
        assert future.result(timeout=90) is None
    any_group = cadmin.AclBindingFilter(
        cadmin.ResourceType.GROUP,
        None,
        cadmin.ResourcePatternType.ANY,
        None,
        None,
        cadmin.AclOperation.ANY,
        cadmin.AclPermissionType.ANY,
    )
    described = admin.describe_acls(any_group, request_timeout=60).result(timeout=90)
    assert [(b.name, b.principal, b.operation) for b in described] == [
        ("reports-", "User:bob", cadmin.AclOperation.READ)
    ]
    [deleted] = admin.delete_acls([any_group], request_timeout=60).values()
    assert [b.name for b in deleted.result(timeout=90)] == ["reports-"]
    assert admin.describe_acls(any_group, request_timeout=60).result(timeout=90) == []


def test_kafka_python_admin_client_manages_acls(sasl_secured: tuple[LocalCluster, str]) -> None:
    """kafka-python's create_acls, describe_acls and delete_acls (its own versions of the ACL APIs)."""
    from kafka.admin import (
        ACL,
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        KafkaAdminClient,
    )
    from kafka.admin import (
        ResourcePattern as KResourcePattern,
    )
    from kafka.admin import (
        ResourcePatternFilter as KResourcePatternFilter,
    )
    from kafka.admin import (
        ResourceType as KResourceType,
    )

    from tests.cluster.test_sasl import ADMIN, kafka_python_sasl

    local, _ = sasl_secured
    servers = ",".join((b.endpoint or "").split("://", 1)[1] for b in local.status().brokers)
    admin = KafkaAdminClient(bootstrap_servers=servers, **kafka_python_sasl("SCRAM-SHA-512", ADMIN, ADMIN_PASSWORD))
    try:
        pattern = KResourcePattern(KResourceType.TOPIC, "kp-topic", ACLResourcePatternType.LITERAL)
        acl = ACL("User:carol", "*", ACLOperation.WRITE, ACLPermissionType.DENY, pattern)
        created = admin.create_acls([acl])
        assert created["failed"] == [] and len(created["succeeded"]) == 1
        acl_filter = ACLFilter(
            None,
            None,
            ACLOperation.ANY,
            ACLPermissionType.ANY,
            KResourcePatternFilter(KResourceType.TOPIC, "kp-topic", ACLResourcePatternType.ANY),
        )
        described, error = admin.describe_acls(acl_filter)
        assert error.errno == 0
        assert [(a.principal, a.operation, a.permission_type) for a in described] == [
            ("User:carol", ACLOperation.WRITE, ACLPermissionType.DENY)
        ]
        [(_, deleted, _)] = admin.delete_acls([acl_filter])
        assert [a.principal for a in deleted] == ["User:carol"]
        assert admin.describe_acls(acl_filter)[0] == []
    finally:
        admin.close()


def group_consume(servers: str, topic: str, group: str, wanted: int) -> tuple[list[bytes], list[str]]:
    """A confluent-kafka consumer in `group` (subscribe, commit): the values read and the errors seen."""
    from confluent_kafka import Consumer

    consumer = Consumer(
        {"bootstrap.servers": servers, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False}
    )
    values: list[bytes] = []
    seen: list[str] = []
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 20
        while len(values) < wanted and time.monotonic() < deadline and not seen:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error() is not None:
                seen.append(message.error().name())
                continue
            values.append(message.value())
        if values:
            consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return values, seen


def test_group_acls_with_a_consumer_group(secured: tuple[LocalCluster, str]) -> None:
    local, connect = secured
    topic = "grouped"
    create_topic(connect, topic)
    zk_args = ("--authorizer-properties", f"zookeeper.connect={connect}")
    granted = acls(
        *zk_args,
        "--add",
        "--producer",
        "--consumer",
        "--topic",
        topic,
        "--group",
        "readers",
        "--allow-principal",
        "User:ANONYMOUS",
    )
    assert granted.exit_code == 0, granted.stdout
    for endpoint in endpoints(local):
        wait_for(lambda e=endpoint: produce_error(e, topic) != TOPIC_AUTHORIZATION_FAILED, what="WRITE granted")
    assert confluent_produce(bootstrap(local), topic, make_records(0, 3, tag="g")).errors == []
    values, errors_seen = group_consume(bootstrap(local), topic, "readers", 3)
    assert len(values) == 3 and errors_seen == []
    values, errors_seen = group_consume(bootstrap(local), topic, "strangers", 3)
    assert values == [] and errors_seen == ["GROUP_AUTHORIZATION_FAILED"]

"""Unmodified admin clients against real brokers: kafka-python's `KafkaAdminClient` and confluent-kafka's
`AdminClient` create, describe, alter and delete topics and configs, move partitions and read them back;
bad input gets Kafka's error code and text and changes nothing in ZooKeeper."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
)
from kafka import TopicPartition as KTopicPartition
from kafka.admin import AlterConfigOp as KAlterConfigOp
from kafka.admin import ConfigResource as KConfigResource
from kafka.admin import ConfigResourceType, KafkaAdminClient

from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.values import TopicPartition
from tests.cluster.clients_util import all_bootstraps, wait_metadata_everywhere

TIMEOUT_S = 60


@contextlib.contextmanager
def kafka_python_admin(local) -> Iterator[KafkaAdminClient]:  # type: ignore[no-untyped-def]
    client = KafkaAdminClient(bootstrap_servers=all_bootstraps(local), request_timeout_ms=60000)
    try:
        yield client
    finally:
        client.close()


def confluent_admin(local) -> AdminClient:  # type: ignore[no-untyped-def]
    return AdminClient({"bootstrap.servers": all_bootstraps(local)})


def assignment(zk, topic: str) -> dict[int, list[int]]:  # type: ignore[no-untyped-def]
    found = zk.get_topic_assignments([topic])
    return found[topic].replicas if topic in found else {}


def leaders_known(zk, topic: str, partitions: int) -> bool:  # type: ignore[no-untyped-def]
    states = zk.get_partition_states([TopicPartition(topic, p) for p in range(partitions)])
    return all(s is not None and s.leader_and_isr.leader >= 0 for s in states.values())


def test_kafka_python_topics_partitions_and_bad_input(cluster, zk, zk_tree):
    local = cluster(brokers=3)
    with kafka_python_admin(local) as admin:
        created = admin.create_topics(
            {"orders": {"num_partitions": 3, "replication_factor": 2, "configs": {"retention.ms": "3600000"}}},
            timeout_ms=30000,
        )
        (topic,) = created["topics"]
        assert (topic["name"], topic["error_code"]) == ("orders", 0)
        assert (topic["num_partitions"], topic["replication_factor"]) == (3, 2)
        assert topic["configs"]["retention.ms"]["value"] == "3600000"
        replicas = assignment(zk, "orders")
        assert sorted(replicas) == [0, 1, 2] and all(len(set(r)) == 2 for r in replicas.values())
        assert zk.get_entity_config("topics", "orders")[0] == {"retention.ms": "3600000"}
        # the broker answered once the leaders were in its metadata cache
        assert leaders_known(zk, "orders", 3)

        before = zk_tree()
        bad = admin.create_topics(
            {
                "orders": {"num_partitions": 1, "replication_factor": 1},
                "too-many": {"num_partitions": 1, "replication_factor": 5},
                "bad-config": {"num_partitions": 1, "replication_factor": 1, "configs": {"retention.ms": "soon"}},
                "unknown-config": {"num_partitions": 1, "replication_factor": 1, "configs": {"nope": "1"}},
                "both": {"num_partitions": 1, "replication_factor": 1, "assignments": {0: [0]}},
            },
            timeout_ms=30000,
            raise_errors=False,
        )
        answers = {t["name"]: (t["error_code"], t["error_message"]) for t in bad["topics"]}
        assert answers == {
            "orders": (36, "Topic 'orders' already exists."),
            "too-many": (38, "Replication factor: 5 larger than available brokers: 3."),
            "bad-config": (40, "Invalid value soon for configuration retention.ms: Not a number of type LONG"),
            "unknown-config": (40, "Unknown topic config name: nope"),
            "both": (
                42,
                "Both numPartitions or replicationFactor and replicasAssignments were set. "
                "Both cannot be used at the same time.",
            ),
        }
        checked = admin.create_topics({"dry": {"num_partitions": 2, "replication_factor": 1}}, validate_only=True)
        assert checked["topics"][0]["error_code"] == 0
        assert zk_tree() == before

        grown = admin.create_partitions({"orders": {"count": 5, "assignments": [[0, 1], [1, 2]]}}, timeout_ms=30000)
        assert [(r.name, r.error_code) for r in grown.results] == [("orders", 0)]
        assert assignment(zk, "orders")[3] == [0, 1] and assignment(zk, "orders")[4] == [1, 2]
        before = zk_tree()
        refused = admin.create_partitions({"orders": 2}, raise_errors=False)
        assert [(r.error_code, r.error_message) for r in refused.results] == [
            (37, "Topic currently has 5 partitions, which is higher than the requested 2.")
        ]
        assert zk_tree() == before

        deleted = admin.delete_topics(["orders", "missing"], timeout_ms=30000, raise_errors=False)
        assert {t["name"]: t["error_code"] for t in deleted["topics"]} == {"orders": 0, "missing": 3}
        # answered once the metadata cache dropped it; the controller then removes the znodes
        wait_for(lambda: "orders" not in zk.get_all_topics(), timeout_s=TIMEOUT_S)


def test_kafka_python_configs_cluster_and_reassignments(cluster, zk):
    local = cluster(brokers=3)
    with kafka_python_admin(local) as admin:
        admin.create_topics({"t": {"num_partitions": 2, "replication_factor": 1}}, timeout_ms=30000)
        # CreateTopics waits for the receiving broker's metadata cache only, as Kafka's does, and kafka-python
        # first checks the key with a DescribeConfigs to any broker, which answers from its own cache
        wait_metadata_everywhere(local, "t", 2)
        altered = admin.alter_configs(
            [
                KConfigResource(
                    ConfigResourceType.TOPIC, "t", configs={"cleanup.policy": (KAlterConfigOp.SET, "compact")}
                )
            ]
        )
        assert altered, altered
        assert zk.get_entity_config("topics", "t")[0] == {"cleanup.policy": "compact"}
        described = admin.describe_configs([KConfigResource(ConfigResourceType.TOPIC, "t")], config_filter="all")
        configs = described["topic"]["t"]
        assert configs["cleanup.policy"]["value"] == "compact"
        assert configs["segment.bytes"]["value"] == "1073741824"

        # (kafka-python 3.0.12's describe_cluster pops DescribeCluster v1's `endpoint_type`, which Kafka 2.8's v0
        # answer does not have: it fails against Kafka 2.8 too. confluent-kafka's is tested below.)

        current = assignment(zk, "t")[0]
        target = [b for b in (0, 1, 2) if b not in current][:1] + current
        results = admin.alter_partition_reassignments({KTopicPartition("t", 0): target})
        assert list(results.values()) == [None], results
        wait_for(lambda: assignment(zk, "t")[0] == target, timeout_s=TIMEOUT_S)
        wait_for(lambda: admin.list_partition_reassignments() == {}, timeout_s=TIMEOUT_S)
        cancelled = admin.alter_partition_reassignments({KTopicPartition("t", 1): None})
        assert [error.errno for error in cancelled.values()] == [85]  # NO_REASSIGNMENT_IN_PROGRESS


def test_confluent_admin_client(cluster, zk, zk_tree):
    local = cluster(brokers=3)
    admin = confluent_admin(local)
    futures = admin.create_topics(
        [NewTopic("c1", num_partitions=2, replication_factor=3, config={"min.insync.replicas": "2"})],
        operation_timeout=30,
    )
    futures["c1"].result(TIMEOUT_S)
    assert len(assignment(zk, "c1")) == 2 and leaders_known(zk, "c1", 2)

    before = zk_tree()
    failures = admin.create_topics(
        [
            NewTopic("c1", 1, 1),
            NewTopic("c-bad", num_partitions=1, replication_factor=1, config={"min.insync.replicas": "0"}),
        ],
        operation_timeout=30,
    )
    errors = {}
    for name, future in failures.items():
        with pytest.raises(KafkaException) as caught:
            future.result(TIMEOUT_S)
        errors[name] = (caught.value.args[0].code(), caught.value.args[0].str())
    assert errors == {
        "c1": (KafkaError.TOPIC_ALREADY_EXISTS, "Topic 'c1' already exists."),
        "c-bad": (
            KafkaError.INVALID_CONFIG,
            "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1",
        ),
    }
    assert zk_tree() == before

    admin.create_partitions([NewPartitions("c1", 4)], operation_timeout=30)["c1"].result(TIMEOUT_S)
    assert len(assignment(zk, "c1")) == 4

    resource = ConfigResource("TOPIC", "c1")
    (entries,) = [f.result(TIMEOUT_S) for f in admin.describe_configs([resource]).values()]
    assert entries["min.insync.replicas"].value == "2"
    assert entries["min.insync.replicas"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert entries["retention.ms"].source == ConfigSource.DEFAULT_CONFIG.value

    change = ConfigResource(
        "TOPIC",
        "c1",
        incremental_configs=[ConfigEntry("retention.ms", "1000", incremental_operation=AlterConfigOpType.SET)],
    )
    admin.incremental_alter_configs([change])[change].result(TIMEOUT_S)
    assert zk.get_entity_config("topics", "c1")[0] == {"min.insync.replicas": "2", "retention.ms": "1000"}

    before = zk_tree()
    bad = ConfigResource(
        "TOPIC",
        "c1",
        incremental_configs=[ConfigEntry("retention.ms", "x", incremental_operation=AlterConfigOpType.SET)],
    )
    with pytest.raises(KafkaException) as caught:
        admin.incremental_alter_configs([bad])[bad].result(TIMEOUT_S)
    assert caught.value.args[0].code() == KafkaError.INVALID_REQUEST
    assert caught.value.args[0].str() == (
        "Invalid config value for resource ConfigResource(type=TOPIC, name='c1'): "
        "Invalid value x for configuration retention.ms: Not a number of type LONG"
    )
    assert zk_tree() == before

    description = admin.describe_cluster().result(TIMEOUT_S)
    assert sorted(node.id for node in description.nodes) == [0, 1, 2]
    assert description.controller.id == zk.get_controller_id()

    admin.delete_topics(["c1"], operation_timeout=30)["c1"].result(TIMEOUT_S)
    wait_for(lambda: "c1" not in zk.get_all_topics(), timeout_s=TIMEOUT_S)


def test_dynamic_broker_config_applies_live(cluster, zk, zk_tree):
    local = cluster(brokers=3)
    admin = confluent_admin(local)
    admin.create_topics([NewTopic("live", num_partitions=1, replication_factor=1)], operation_timeout=30)[
        "live"
    ].result(TIMEOUT_S)
    # the cluster-wide `<default>` is the empty broker name, which both clients' ConfigResource refuse: sent
    # as kafka-configs --bootstrap-server --entity-default sends it
    with KafkaClient(all_bootstraps(local)) as client:
        body = {
            "resources": [
                {
                    "resource_type": 4,
                    "resource_name": "",
                    "configs": [{"name": "min.insync.replicas", "config_operation": 0, "value": "2"}],
                }
            ],
            "validate_only": False,
        }
        _, answer = client.broker_request(0, ApiKey.INCREMENTAL_ALTER_CONFIGS, body)
        assert [r["error_code"] for r in answer["responses"]] == [0]
    assert zk.get_entity_config("brokers", znodes.DEFAULT_ENTITY_NAME)[0] == {"min.insync.replicas": "2"}

    def described(broker_id: int) -> str | None:
        resource = ConfigResource("BROKER", str(broker_id))
        (entries,) = [f.result(TIMEOUT_S) for f in admin.describe_configs([resource]).values()]
        entry = entries["min.insync.replicas"]
        return entry.value if entry.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value else None

    wait_for(lambda: all(described(b) == "2" for b in (0, 1, 2)), timeout_s=TIMEOUT_S)

    # seen live: acks=all on a single-replica topic is now refused
    outcome: list[KafkaError] = []
    producer = Producer(
        {"bootstrap.servers": all_bootstraps(local), "acks": "all", "message.timeout.ms": 5000, "retries": 0}
    )
    producer.produce("live", b"v", on_delivery=lambda error, _msg: outcome.append(error))
    producer.flush(30)
    assert outcome and outcome[0] is not None and outcome[0].code() == KafkaError.NOT_ENOUGH_REPLICAS

    before = zk_tree()
    static = ConfigResource(
        "BROKER", "1", incremental_configs=[ConfigEntry("broker.id", "7", incremental_operation=AlterConfigOpType.SET)]
    )
    with pytest.raises(KafkaException) as caught:
        admin.incremental_alter_configs([static])[static].result(TIMEOUT_S)
    assert caught.value.args[0].code() == KafkaError.INVALID_REQUEST
    assert "Cannot update these configs dynamically: Set(broker.id)" in caught.value.args[0].str()
    assert zk_tree() == before

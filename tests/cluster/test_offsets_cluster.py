"""`__consumer_offsets` on a real 3-broker cluster: FindCoordinator creates it on first use, standalone
consumers (confluent-kafka and kafka-python, `assign` + `commit`, no group membership) commit and read back
their offsets, the records on disk decode with Kafka's schemas and `dump-log` reads the segments, and the
committed offsets survive a SIGKILL of the coordinator's broker (the next leader loads them).

One cluster for the module; each test has its own topic and group. The failover test runs last."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException
from confluent_kafka import TopicPartition as CkTopicPartition
from kafka import KafkaConsumer
from kafka import TopicPartition as KpTopicPartition
from kafka.structs import OffsetAndMetadata as KpOffsetAndMetadata

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.kafka_client.connection import BrokerConnection
from kafkaops.cluster.broker.group_metadata_manager import GROUP_METADATA_TOPIC_NAME, partition_for
from kafkaops.cluster.common import errors
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.protocol.group_coordinator_records import (
    OffsetKey,
    read_message_key,
    read_offset_message_value,
)
from kafkaops.cluster.protocol.records import Record, build_batch, iter_records
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import TopicPartition as KTopicPartition
from tests.cluster.clients_util import bootstrap_of, leader_of, log_batches, log_dir, wait_partitions
from tests.cluster.conftest import FAST, module_cluster

OFFSETS_PARTITIONS = 3
SETTINGS = {
    **FAST,
    "offsets.topic.num.partitions": OFFSETS_PARTITIONS,
    "replica.lag.time.max.ms": 3000,
}


@pytest.fixture(scope="module")
def offsets_cluster(zookeeper_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    with module_cluster(zookeeper_server, tmp_path_factory, "offsets", SETTINGS) as local:
        yield local


@pytest.fixture(scope="module")
def ozk(offsets_cluster: LocalCluster) -> Iterator[KafkaZkClient]:
    client = KafkaZkClient(offsets_cluster.zookeeper_connect)
    try:
        yield client
    finally:
        client.close()


def _topic(zk: KafkaZkClient, name: str, partitions: int = 2) -> None:
    admin_topics.create_topic(zk, name, partitions, 3, None, {})
    wait_partitions(zk, name, partitions, isr_size=3)


def _confluent(bootstrap: str, group: str) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            "socket.timeout.ms": 10000,
            "topic.metadata.refresh.interval.ms": 1000,
        }
    )


def _confluent_commit(bootstrap: str, group: str, offsets: list[CkTopicPartition]) -> None:
    consumer = _confluent(bootstrap, group)
    try:
        consumer.assign(offsets)
        deadline = time.monotonic() + 60
        while True:
            try:
                consumer.commit(offsets=offsets, asynchronous=False)
                return
            except KafkaException as error:  # the coordinator may still be coming up
                if time.monotonic() > deadline or not error.args[0].retriable():
                    raise
                time.sleep(0.5)
    finally:
        consumer.close()


def _confluent_committed(bootstrap: str, group: str, partitions: list[CkTopicPartition]) -> dict[int, tuple[int, str]]:
    consumer = _confluent(bootstrap, group)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                found = consumer.committed(partitions, timeout=10)
                return {tp.partition: (tp.offset, tp.metadata or "") for tp in found}
            except KafkaException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
    finally:
        consumer.close()


def _offsets_replicas(zk: KafkaZkClient) -> dict[int, list[int]]:
    return zk.get_topic_assignments([GROUP_METADATA_TOPIC_NAME])[GROUP_METADATA_TOPIC_NAME].replicas


def _offsets_leader(zk: KafkaZkClient, group: str) -> int:
    return leader_of(zk, GROUP_METADATA_TOPIC_NAME, partition_for(group, OFFSETS_PARTITIONS))


def test_confluent_standalone_commit_creates_the_offsets_topic_and_reads_back(
    offsets_cluster: LocalCluster, ozk: KafkaZkClient
) -> None:
    bootstrap = bootstrap_of(offsets_cluster)
    _topic(ozk, "ck")
    offsets = [CkTopicPartition("ck", 0, 5), CkTopicPartition("ck", 1, 7, metadata="meta")]
    _confluent_commit(bootstrap, "standalone-ck", offsets)
    # created as Kafka creates it: the configured partitions, RF 3, compacted
    assignment = _offsets_replicas(ozk)
    assert len(assignment) == OFFSETS_PARTITIONS and all(len(r) == 3 for r in assignment.values())
    overrides, _ = ozk.get_entity_config("topics", GROUP_METADATA_TOPIC_NAME)
    assert overrides == {"cleanup.policy": "compact", "segment.bytes": "104857600", "compression.type": "producer"}
    committed = _confluent_committed(bootstrap, "standalone-ck", [CkTopicPartition("ck", p) for p in (0, 1)])
    assert committed == {0: (5, ""), 1: (7, "meta")}
    # a group that never committed has no offsets
    nothing = _confluent_committed(bootstrap, "never-ck", [CkTopicPartition("ck", 0)])
    assert nothing[0][0] < 0


def test_kafka_python_standalone_commit_reads_back(offsets_cluster: LocalCluster, ozk: KafkaZkClient) -> None:
    bootstrap = bootstrap_of(offsets_cluster)
    _topic(ozk, "kp")
    tp0, tp1 = KpTopicPartition("kp", 0), KpTopicPartition("kp", 1)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id="standalone-kp", enable_auto_commit=False)
    try:
        consumer.assign([tp0, tp1])
        consumer.commit({tp0: KpOffsetAndMetadata(11, "m", -1), tp1: KpOffsetAndMetadata(3, "", -1)})
    finally:
        consumer.close()
    reader = KafkaConsumer(bootstrap_servers=bootstrap, group_id="standalone-kp", enable_auto_commit=False)
    try:
        assert reader.committed(tp0) == 11 and reader.committed(tp1) == 3
        # the all-partitions form of OffsetFetch (null topics), as kafka-python's admin client sends it
        assert reader.committed(KpTopicPartition("kp", 0), metadata=True).metadata == "m"
    finally:
        reader.close()
    # and confluent-kafka reads what kafka-python committed
    consumer2 = _confluent(bootstrap, "standalone-kp")
    try:
        found = consumer2.committed([CkTopicPartition("kp", p) for p in (0, 1)], timeout=10)
        assert [(tp.partition, tp.offset) for tp in found] == [(0, 11), (1, 3)]
    finally:
        consumer2.close()


def test_the_records_decode_with_kafkas_schemas_and_dump_log_reads_them(
    offsets_cluster: LocalCluster, ozk: KafkaZkClient
) -> None:
    _topic(ozk, "dec", 1)
    bootstrap = bootstrap_of(offsets_cluster)
    _confluent_commit(bootstrap, "decoded", [CkTopicPartition("dec", 0, 42)])
    partition = partition_for("decoded", OFFSETS_PARTITIONS)
    states = wait_partitions(ozk, GROUP_METADATA_TOPIC_NAME, OFFSETS_PARTITIONS)
    # acknowledged only once replicated: every replica has the record
    for replica in _offsets_replicas(ozk)[partition]:
        assert replica in states[partition].isr

        def found(replica: int = replica) -> list[tuple[OffsetKey, Any]]:
            commits = []
            for batch in log_batches(offsets_cluster, replica, GROUP_METADATA_TOPIC_NAME, partition):
                for record in iter_records(batch):
                    assert record.key is not None
                    key = read_message_key(record.key)
                    if isinstance(key, OffsetKey) and key.group == "decoded":
                        commits.append((key, read_offset_message_value(record.value)))
            return commits

        commits = wait_for(found, 15, what=f"the commit in replica {replica}'s log")
        key, value = commits[-1]
        assert (key.version, key.topic, key.partition) == (1, "dec", 0)
        assert value is not None and value.offset == 42 and value.expire_timestamp is None
    segment = log_dir(offsets_cluster, states[partition].leader, GROUP_METADATA_TOPIC_NAME, partition)
    files = ["--files", str(segment / "00000000000000000000.log")]
    result = subprocess.run(
        [sys.executable, "-m", "kafkaops.cli", "dump-log", *files], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "baseOffset: " in result.stdout
    decoded = subprocess.run(
        [sys.executable, "-m", "kafkaops.cli", "dump-log", *files, "--offsets-decoder"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert decoded.returncode == 0, decoded.stderr
    assert " key: offset_commit::group=decoded,partition=dec-0 payload: offset=42" in decoded.stdout


def _connection(local: LocalCluster, broker_id: int) -> BrokerConnection:
    endpoint = next(b.endpoint for b in local.status().brokers if b.broker_id == broker_id)
    assert endpoint is not None
    host, port = endpoint.removeprefix("PLAINTEXT://").split(":")
    connection = BrokerConnection(host, int(port), "kafkaops-test", 10.0, str(broker_id))
    connection.connect()
    return connection


def test_the_wire_forms(offsets_cluster: LocalCluster, ozk: KafkaZkClient) -> None:
    """v0 commits go to ZooKeeper as Kafka 2.8 keeps them; a non-coordinator says NOT_COORDINATOR; the
    all-partitions OffsetFetch; OffsetDelete; clients may not produce to the offsets topic."""
    _topic(ozk, "wire", 1)
    group = "wire-group"
    _confluent_commit(bootstrap_of(offsets_cluster), group, [CkTopicPartition("wire", 0, 9)])
    coordinator = _offsets_leader(ozk, group)
    other = next(b for b in offsets_cluster.broker_ids() if b != coordinator)
    topics = [
        {"name": "wire", "partitions": [{"partition_index": 0, "committed_offset": 77, "committed_metadata": None}]}
    ]
    with_v0 = _connection(offsets_cluster, other)
    try:
        answer = with_v0.request(ApiKey.OFFSET_COMMIT, 0, {"group_id": "zk-group", "topics": topics}, 10.0)
        assert answer["topics"][0]["partitions"][0]["error_code"] == 0
        assert ozk.get_consumer_offset("zk-group", KTopicPartition("wire", 0)) == 77
        fetch_v0 = {"group_id": "zk-group", "topics": [{"name": "wire", "partition_indexes": [0]}]}
        fetched = with_v0.request(ApiKey.OFFSET_FETCH, 0, fetch_v0, 10.0)
        assert fetched["topics"][0]["partitions"][0]["committed_offset"] == 77
        answer = with_v0.request(ApiKey.OFFSET_FETCH, 7, {"group_id": group, "topics": None}, 10.0)
        assert answer["error_code"] == errors.NotCoordinatorError.code
    finally:
        with_v0.close()
    connection = _connection(offsets_cluster, coordinator)
    try:
        found = connection.request(ApiKey.OFFSET_FETCH, 7, {"group_id": group, "topics": None}, 10.0)
        assert found["error_code"] == 0
        assert [(t["name"], [p["committed_offset"] for p in t["partitions"]]) for t in found["topics"]] == [
            ("wire", [9])
        ]
        delete = {"group_id": group, "topics": [{"name": "wire", "partitions": [{"partition_index": 0}]}]}
        deleted = connection.request(ApiKey.OFFSET_DELETE, 0, delete, 10.0)
        assert (deleted["error_code"], deleted["topics"][0]["partitions"][0]["error_code"]) == (0, 0)
        found = connection.request(ApiKey.OFFSET_FETCH, 7, {"group_id": group, "topics": None}, 10.0)
        assert found["topics"] == []
    finally:
        connection.close()
    # a client's produce to the offsets topic: INVALID_TOPIC_EXCEPTION ("Cannot append to internal topic")
    partition = partition_for(group, OFFSETS_PARTITIONS)
    batch = build_batch([Record(0, 0, b"not", b"ours")])
    data = [{"name": GROUP_METADATA_TOPIC_NAME, "partition_data": [{"index": partition, "records": batch}]}]
    connection = _connection(offsets_cluster, coordinator)
    try:
        body = {"transactional_id": None, "acks": 1, "timeout_ms": 5000, "topic_data": data}
        produced = connection.request(ApiKey.PRODUCE, 8, body, 10.0)
        assert produced["responses"][0]["partition_responses"][0]["error_code"] == errors.InvalidTopicError.code
    finally:
        connection.close()


def test_committed_offsets_survive_a_sigkill_of_the_coordinator(
    offsets_cluster: LocalCluster, ozk: KafkaZkClient
) -> None:
    _topic(ozk, "fo")
    bootstrap = bootstrap_of(offsets_cluster)
    group = "failover"
    _confluent_commit(bootstrap, group, [CkTopicPartition("fo", 0, 100), CkTopicPartition("fo", 1, 200)])
    coordinator = _offsets_leader(ozk, group)
    offsets_cluster.stop_broker(coordinator, hard=True)
    try:
        wait_for(lambda: _offsets_leader(ozk, group) not in (-1, coordinator), 30, what="a new offsets leader")
        alive = ",".join(
            b.endpoint.removeprefix("PLAINTEXT://")
            for b in offsets_cluster.status().brokers
            if b.endpoint and b.broker_id != coordinator
        )
        committed = _confluent_committed(alive, group, [CkTopicPartition("fo", p) for p in (0, 1)])
        assert committed == {0: (100, ""), 1: (200, "")}
        # the new coordinator takes commits too (once the ISR has shrunk past the dead broker)
        _confluent_commit(alive, group, [CkTopicPartition("fo", 0, 150)])
        consumer = KafkaConsumer(bootstrap_servers=alive, group_id=group, enable_auto_commit=False)
        try:
            assert consumer.committed(KpTopicPartition("fo", 0)) == 150
        finally:
            consumer.close()
    finally:
        offsets_cluster.start_broker(coordinator)

"""Log dirs and log start offsets on real brokers with two log dirs each (issue 15): AlterReplicaLogDirs moves
replicas between a broker's dirs under a producer with acks=all (nothing acknowledged is lost, the old dir is
emptied), DescribeLogDirs and the `log-dirs` tool, DeleteRecords and the `delete-records` tool (consumers
then start at the new log start offset on every replica; the checkpoint survives a restart), and the same
APIs through kafka-python's and confluent-kafka's admin clients."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.admin.kafka_client import KafkaClient
from kafkaops.admin.kafka_client import log_dirs as calls
from kafkaops.admin.kafka_client.log_dirs import ReplicaLogDirInfo, TopicPartitionReplica
from kafkaops.cli.app import app
from kafkaops.cluster.common import errors
from kafkaops.cluster.common.errors import OffsetOutOfRangeError
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.local.zookeeper import free_port
from kafkaops.cluster.log.checkpoints import LOG_START_OFFSET_CHECKPOINT, parse_offsets
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import TopicPartition
from tests.cluster.clients_util import Background, all_bootstraps, confluent_consume, leader_of, wait_partitions
from tests.cluster.conftest import FAST

runner = CliRunner()


def data_dirs(local: LocalCluster, broker_id: int) -> list[Path]:
    return [local.broker_dir(broker_id) / "data-a", local.broker_dir(broker_id) / "data-b"]


@pytest.fixture
def two_dir_cluster(zk_connect: str, tmp_path: Path) -> Iterator[Callable[..., LocalCluster]]:
    """`two_dir_cluster(brokers=3, **overrides)`: brokers whose `log.dirs` are `data-a,data-b`; all killed
    afterwards. (LocalCluster keeps a broker config it finds, so each is written before `up`.)"""
    started: list[LocalCluster] = []

    def start(brokers: int = 3, **overrides: Any) -> LocalCluster:
        local = LocalCluster(tmp_path / f"cluster-{len(started)}")
        started.append(local)
        for broker_id in range(brokers):
            directory = local.broker_dir(broker_id)
            (directory / "logs").mkdir(parents=True)
            config = {
                "broker.id": broker_id,
                "listeners": f"PLAINTEXT://127.0.0.1:{free_port()}",
                "log.dirs": ",".join(map(str, data_dirs(local, broker_id))),
                "zookeeper.connect": zk_connect,
                **FAST,
                "log.retention.check.interval.ms": 500,
                **overrides,
            }
            (directory / "broker.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        local.up(brokers=brokers, zookeeper_connect=zk_connect)
        return local

    try:
        yield start
    finally:
        for local in started:
            for broker_id in local.broker_ids():
                local.stop_broker(broker_id, hard=True)


def replica_dirs(client: KafkaClient, topic: str, partition: int, brokers: list[int]) -> dict[int, ReplicaLogDirInfo]:
    found = calls.describe_replica_log_dirs(client, [TopicPartitionReplica(topic, partition, b) for b in brokers])
    result: dict[int, ReplicaLogDirInfo] = {}
    for replica, info in found.items():
        assert isinstance(info, ReplicaLogDirInfo), info
        result[replica.broker_id] = info
    return result


def replica_values(client: KafkaClient, broker_id: int, topic: str, partition: int, start: int) -> list[bytes | None]:
    """Every record of a replica from `start`, read from that broker as Kafka's debugging consumer."""
    values: list[bytes | None] = []
    offset = start
    while True:
        fetched = client.fetch_from_broker(broker_id, topic, partition, offset, max_bytes=1 << 20)
        if not fetched.records:
            return values
        values += [r.value for r in fetched.records]
        offset = fetched.next_offset


# --- AlterReplicaLogDirs ---------------------------------------------------------------------------------


def test_replicas_move_between_log_dirs_under_an_acks_all_producer(two_dir_cluster, zk: KafkaZkClient) -> None:
    from confluent_kafka import Producer

    local = two_dir_cluster(3, **{"min.insync.replicas": 2})
    admin_topics.create_topic(zk, "mv", None, None, {0: [0, 1, 2]}, {"segment.bytes": "65536"}, rng=JavaRandom(1))
    wait_partitions(zk, "mv", 1, isr_size=3)
    bootstrap = all_bootstraps(local)
    acked: list[bytes] = []
    lock = threading.Lock()

    def produce(stop: threading.Event) -> None:
        # idempotent: a retry after a timeout under load must not write a record twice (checked below)
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 2, "enable.idempotence": True})

        def delivered(err: Any, msg: Any) -> None:
            if err is None:
                with lock:
                    acked.append(msg.value())

        n = 0
        while not stop.is_set():
            try:
                producer.produce("mv", value=b"v%06d" % n + b"x" * 200, partition=0, on_delivery=delivered)
                n += 1
            except BufferError:
                pass
            producer.poll(0.001 if n % 50 else 0.02)
        assert producer.flush(60) == 0

    background = Background(produce)
    with KafkaClient(bootstrap, request_timeout_ms=15000) as client:
        wait_for(lambda: len(acked) > 5000, timeout_s=120)  # about 1 MB, 16 segments, to copy while more comes
        before = replica_dirs(client, "mv", 0, [0, 1, 2])
        targets = {}
        for broker_id, info in before.items():
            current = info.current_replica_log_dir
            assert current is not None and info.future_replica_log_dir is None
            (other,) = [str(d) for d in data_dirs(local, broker_id) if str(d) != current]
            targets[broker_id] = other
        result = calls.alter_replica_log_dirs(
            client, {TopicPartitionReplica("mv", 0, b): target for b, target in targets.items()}
        )
        assert set(result.values()) == {None}

        def moved() -> bool:
            now = replica_dirs(client, "mv", 0, [0, 1, 2])
            return all(
                now[b].current_replica_log_dir == targets[b] and now[b].future_replica_log_dir is None for b in now
            )

        wait_for(moved, timeout_s=60, what="every replica of mv-0 in its new log dir")
        count = len(acked)
        wait_for(lambda: len(acked) > count + 200, timeout_s=60)  # the producer goes on after the swaps
        background.stop()
        wait_partitions(zk, "mv", 1, isr_size=3)
        leader = leader_of(zk, "mv", 0)
        on_leader = replica_values(client, leader, "mv", 0, 0)
        assert set(acked) <= set(on_leader), "acknowledged records missing after the move"
        assert len(on_leader) == len(set(on_leader))
        for broker_id in (0, 1, 2):
            wait_for(lambda b=broker_id: replica_values(client, b, "mv", 0, 0) == on_leader, timeout_s=30)
            old = before[broker_id].current_replica_log_dir
            assert old is not None
            wait_for(lambda o=old: not list(Path(o).glob("mv-0*")), timeout_s=20, what=f"{old} emptied of mv-0")
            assert (Path(targets[broker_id]) / "mv-0").is_dir()


def test_describe_log_dirs_the_tool_and_the_admin_clients(two_dir_cluster, zk: KafkaZkClient) -> None:
    from kafka import KafkaAdminClient
    from kafka import TopicPartitionReplica as KpReplica

    local = two_dir_cluster(2)
    # a preferred dir named before the partition exists here is used when it is created
    bootstrap = all_bootstraps(local)
    with KafkaClient(bootstrap, request_timeout_ms=15000) as client:
        second = str(data_dirs(local, 0)[1])
        early = calls.alter_replica_log_dirs(client, {TopicPartitionReplica("later", 0, 0): second})
        assert isinstance(early[TopicPartitionReplica("later", 0, 0)], errors.UnknownTopicOrPartitionError)
        admin_topics.create_topic(zk, "later", None, None, {0: [0], 1: [1]}, {}, rng=JavaRandom(1))
        wait_partitions(zk, "later", 2)
        wait_for(lambda: (Path(second) / "later-0").is_dir(), timeout_s=20)
        # errors as Kafka answers them
        answers = calls.alter_replica_log_dirs(
            client,
            {
                TopicPartitionReplica("later", 0, 0): "/no/such/dir",
                TopicPartitionReplica("later", 1, 0): second,  # broker 0 holds no replica of later-1
            },
        )
        assert isinstance(answers[TopicPartitionReplica("later", 0, 0)], errors.LogDirNotFoundError)
        assert isinstance(answers[TopicPartitionReplica("later", 1, 0)], errors.ReplicaNotAvailableError)
        described = calls.describe_log_dirs(client, [0, 1])
        assert sorted(described[0]) == sorted(str(d) for d in data_dirs(local, 0))
        info = described[0][second].replica_infos[TopicPartition("later", 0)]
        assert (info.offset_lag, info.is_future) == (0, False)

    result = runner.invoke(
        app, ["log-dirs", "--describe", "--bootstrap-server", bootstrap, "--topic-list", "later", "--broker-list", "0"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:2] == [
        "Querying brokers for log directories information",
        "Received log directory information from brokers 0",
    ]
    document = json.loads(lines[2])
    assert document["version"] == 1 and [b["broker"] for b in document["brokers"]] == [0]
    dirs = {d["logDir"]: d for d in document["brokers"][0]["logDirs"]}
    assert dirs[second] == {
        "logDir": second,
        "error": None,
        "partitions": [{"partition": "later-0", "size": 0, "offsetLag": 0, "isFuture": False}],
    }
    assert len(lines) == 3

    everyone = runner.invoke(app, ["log-dirs", "--describe", "--bootstrap-server", bootstrap])
    assert everyone.output.splitlines()[1] == "Received log directory information from brokers 0,1"
    unknown = runner.invoke(app, ["log-dirs", "--describe", "--bootstrap-server", bootstrap, "--broker-list", "7"])
    assert unknown.exit_code == 1
    assert unknown.output.splitlines() == [
        "Querying brokers for log directories information",
        "NETWORK_EXCEPTION: Broker 7 is not in the cluster's metadata",
    ]

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15000)
    try:
        by_broker = {entry["broker"]: entry["log_dirs"] for entry in admin.describe_log_dirs()}
        assert sorted(by_broker) == [0, 1]
        assert sorted(d["log_dir"] for d in by_broker[0]) == sorted(str(d) for d in data_dirs(local, 0))
        first = str(data_dirs(local, 0)[0])
        moved = admin.alter_replica_log_dirs({KpReplica("later", 0, 0): first})
        assert [error.__name__ for error in moved.values()] == ["NoError"]
        wait_for(lambda: (Path(first) / "later-0").is_dir() and not (Path(second) / "later-0").exists(), timeout_s=30)
    finally:
        admin.close()


# --- DeleteRecords ---------------------------------------------------------------------------------------


def _produce(bootstrap: str, topic: str, partition: int, count: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0, "batch.num.messages": 1})
    for i in range(count):
        producer.produce(topic, value=b"r%04d" % i + b"." * 100, partition=partition)
        producer.poll(0)
    assert producer.flush(60) == 0


def _log_start_offsets(local: LocalCluster, broker_id: int) -> dict[tuple[str, int], int]:
    found: dict[tuple[str, int], int] = {}
    for directory in data_dirs(local, broker_id):
        path = directory / LOG_START_OFFSET_CHECKPOINT
        if path.exists():
            found.update(parse_offsets(path.read_text(), str(path)))
    return found


def _segment_bases(local: LocalCluster, broker_id: int, topic: str, partition: int) -> list[int]:
    return sorted(int(p.stem) for d in data_dirs(local, broker_id) for p in (d / f"{topic}-{partition}").glob("*.log"))


def test_delete_records_moves_the_log_start_offset_on_every_replica(two_dir_cluster, zk: KafkaZkClient) -> None:
    from confluent_kafka import TopicPartition as CkTopicPartition
    from confluent_kafka.admin import AdminClient
    from kafka import KafkaAdminClient
    from kafka import TopicPartition as KpTopicPartition

    local = two_dir_cluster(3, **{"auto.leader.rebalance.enable": False})
    admin_topics.create_topic(
        zk, "dr", None, None, {0: [0, 1, 2], 1: [1, 2, 0]}, {"segment.bytes": "1024"}, rng=JavaRandom(1)
    )
    wait_partitions(zk, "dr", 2, isr_size=3)
    bootstrap = all_bootstraps(local)
    _produce(bootstrap, "dr", 0, 100)
    _produce(bootstrap, "dr", 1, 10)
    leader = leader_of(zk, "dr", 0)
    # inside a segment, so that the checkpoint must hold it (a segment's base offset implies itself)
    bases = _segment_bases(local, leader, "dr", 0)
    start = bases[len(bases) // 2] + 1
    assert 20 < start < 80 and start not in bases
    offsets = local.state_dir / "offsets.json"
    offsets.write_text(
        json.dumps(
            {
                "partitions": [
                    {"topic": "dr", "partition": 0, "offset": start},
                    {"topic": "dr", "partition": 1, "offset": -1},
                    {"topic": "dr", "partition": 2, "offset": 1},
                    {"topic": "nope", "partition": 0, "offset": 1},
                ],
                "version": 1,
            }
        )
    )
    result = runner.invoke(app, ["delete-records", "--bootstrap-server", bootstrap, "--offset-json-file", str(offsets)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:2] == ["Executing records delete operation", "Records delete operation completed:"]
    assert sorted(lines[2:]) == sorted(
        [
            f"partition: dr-0\tlow_watermark: {start}",
            "partition: dr-1\tlow_watermark: 10",
            "partition: dr-2\terror: org.apache.kafka.common.errors.LeaderNotAvailableException: "
            "There is no leader for this topic-partition as we are in the middle of a leadership election.",
            "partition: nope-0\terror: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
            "This server does not host this topic-partition.",
        ]
    )
    # beyond the high watermark
    offsets.write_text('{"partitions":[{"topic":"dr","partition":1,"offset":11}]}')
    beyond = runner.invoke(app, ["delete-records", "--bootstrap-server", bootstrap, "--offset-json-file", str(offsets)])
    assert beyond.output.splitlines()[2] == (
        "partition: dr-1\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException: "
        "The requested offset is not within the range of offsets maintained by the server."
    )

    with KafkaClient(bootstrap, request_timeout_ms=15000) as client:
        # only the leader deletes: a follower asked directly answers NOT_LEADER_OR_FOLLOWER
        follower = next(b for b in (0, 1, 2) if b != leader)
        body = {"topics": [{"name": "dr", "partitions": [{"partition_index": 0, "offset": 90}]}], "timeout_ms": 5000}
        _, answer = client.broker_request(follower, ApiKey.DELETE_RECORDS, body)
        assert answer["topics"][0]["partitions"][0]["error_code"] == errors.NotLeaderOrFollowerError.code
        for broker_id in (0, 1, 2):
            # the answer came once every replica had moved its log start offset: no waiting here
            with pytest.raises(OffsetOutOfRangeError):
                client.fetch_from_broker(broker_id, "dr", 0, start - 1)
            assert client.fetch_from_broker(broker_id, "dr", 0, start).records[0].offset == start
            assert len(replica_values(client, broker_id, "dr", 0, start)) == 100 - start
            # segments wholly below the log start offset go (at once on the leader, at retention on followers)
            wait_for(
                lambda b=broker_id: _segment_bases(local, b, "dr", 0)[0] < start < _segment_bases(local, b, "dr", 0)[1],
                timeout_s=20,
            )
            assert _segment_bases(local, broker_id, "dr", 0)[0] > 0
    assert _log_start_offsets(local, leader)[("dr", 0)] == start

    # a restart: the leader goes (controlled shutdown), its checkpoint brings the log start offset back
    local.stop_broker(leader)
    wait_for(lambda: leader_of(zk, "dr", 0) not in (leader, -1), timeout_s=30)
    consumed = confluent_consume(bootstrap, "dr", [0], expect={0: 100 - start})
    assert [r.offset for r in consumed][:1] == [start] and len(consumed) == 100 - start
    local.start_broker(leader)
    wait_partitions(zk, "dr", 2, isr_size=3, timeout_s=60)
    assert _log_start_offsets(local, leader)[("dr", 0)] == start
    with KafkaClient(bootstrap, request_timeout_ms=15000) as client, pytest.raises(OffsetOutOfRangeError):
        client.fetch_from_broker(leader, "dr", 0, start - 1)

    # the admin clients of other projects
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.delete_records([CkTopicPartition("dr", 0, start + 5)])
    (future,) = futures.values()
    assert future.result(30).low_watermark == start + 5
    python_admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15000)
    try:
        answer = python_admin.delete_records({KpTopicPartition("dr", 0): start + 10})
        assert [meta["low_watermark"] for meta in answer.values()] == [start + 10]
    finally:
        python_admin.close()
    consumed = confluent_consume(bootstrap, "dr", [0], expect={0: 90 - start})
    assert consumed[0].offset == start + 10 and len(consumed) == 90 - start


def test_a_move_interrupted_by_a_restart_goes_on(two_dir_cluster, zk: KafkaZkClient) -> None:
    """The broker's `replica.alter.log.dirs.io.max.bytes.per.second` holds the copy after its first MB; a
    restart then finds the future log on disk and finishes the move (the throttle gone)."""
    from confluent_kafka import Producer

    local = two_dir_cluster(1)
    admin_topics.create_topic(zk, "rs", None, None, {0: [0]}, {}, rng=JavaRandom(1))
    wait_partitions(zk, "rs", 1)
    bootstrap = all_bootstraps(local)
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    for i in range(3000):
        producer.produce("rs", value=b"%05d" % i + b"-" * 995, partition=0)
        producer.poll(0)
    assert producer.flush(60) == 0
    _, version = zk.get_entity_config("brokers", "0")
    zk.set_entity_config_and_notify(
        "brokers", "0", {"replica.alter.log.dirs.io.max.bytes.per.second": "100000"}, version
    )
    local.stop_broker(0)
    local.start_broker(0)  # it reads its dynamic config at startup
    wait_partitions(zk, "rs", 1)
    with KafkaClient(bootstrap, request_timeout_ms=15000) as client:
        (source,) = [d for d in data_dirs(local, 0) if (d / "rs-0").is_dir()]
        (target,) = [d for d in data_dirs(local, 0) if d != source]

        def values_after_restart() -> list[bytes | None] | None:
            try:
                return replica_values(client, 0, "rs", 0, 0)
            except errors.NetworkExceptionError:
                return None  # a restarted broker lists no brokers until the controller's UpdateMetadata reaches it

        before = wait_for(values_after_restart, timeout_s=30, what="broker 0 in its own metadata after the restart")
        assert len(before) == 3000
        moves = calls.alter_replica_log_dirs(client, {TopicPartitionReplica("rs", 0, 0): str(target)})
        assert list(moves.values()) == [None]

        def future_part_copied() -> bool:
            info = replica_dirs(client, "rs", 0, [0])[0]
            return info.future_replica_log_dir == str(target) and 0 < info.future_replica_offset_lag < 3000

        wait_for(future_part_copied, timeout_s=30, what="a future log part copied, then held by the throttle")
        assert list(target.glob("rs-0.*-future"))
    zk.set_entity_config_and_notify("brokers", "0", {}, zk.get_entity_config("brokers", "0")[1])
    local.stop_broker(0)
    local.start_broker(0)
    wait_partitions(zk, "rs", 1)
    with KafkaClient(bootstrap, request_timeout_ms=15000) as client:

        def moved() -> bool:
            try:
                info = replica_dirs(client, "rs", 0, [0])[0]
            except errors.NetworkExceptionError:
                return False  # a restarted broker lists no brokers until the controller's UpdateMetadata reaches it
            return info.current_replica_log_dir == str(target) and info.future_replica_log_dir is None

        wait_for(moved, timeout_s=30, what="the move finished after the restart")
        assert replica_values(client, 0, "rs", 0, 0) == before
    wait_for(lambda: not list(source.glob("rs-0*")), timeout_s=20, what=f"{source} emptied of rs-0")
    assert not list(target.glob("*-future"))

"""Log compaction in real broker processes, produced to and consumed by confluent-kafka: after cleaning, a
consumer from the beginning reads the latest value of every key at the offset it was acked with, tombstones
vanish after `delete.retention.ms`, the follower's replica compacts to the same records as the leader's, and
`__consumer_offsets` stays bounded under a steady commit load.

One two-broker cluster for the file; each test has its own topic (small segments, short cleaner backoff)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkaops.admin import topics as admin_topics
from kafkaops.cluster.common.errors import CorruptMessageError
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.local.zookeeper import LocalZooKeeper
from kafkaops.cluster.protocol.records import iter_batches, iter_records
from kafkaops.cluster.zk.client import KafkaZkClient
from tests.cluster.clients_util import Rec, bootstrap_of, confluent_consume, confluent_produce, wait_partitions
from tests.cluster.conftest import FAST, module_cluster

COMPACTED = {
    "cleanup.policy": "compact",
    "segment.bytes": "2048",
    "segment.ms": "100",
    "min.cleanable.dirty.ratio": "0.01",
    "delete.retention.ms": "1500",
}

Entry = tuple[int, bytes | None, bytes | None]
OFFSETS_SEGMENT_BYTES = 16384


@pytest.fixture(scope="module")
def compaction_cluster(
    zookeeper_server: LocalZooKeeper, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LocalCluster, KafkaZkClient]]:
    overrides = {
        **FAST,
        "log.cleaner.backoff.ms": 200,
        "offsets.topic.num.partitions": 1,
        "offsets.topic.replication.factor": 2,
        "offsets.topic.segment.bytes": OFFSETS_SEGMENT_BYTES,
    }
    with (
        module_cluster(zookeeper_server, tmp_path_factory, "cleaner", overrides, brokers=2) as local,
        KafkaZkClient(local.zookeeper_connect) as zk,
    ):
        yield local, zk


def replica_entries(local: LocalCluster, broker_id: int, topic: str) -> tuple[list[Entry], int] | None:
    """(offset, key, value) of every record in a replica's segments and its active segment's base offset;
    None when the cleaner swapped a file away while it was being read (the caller reads again)."""
    directory = local.broker_dir(broker_id) / "data" / f"{topic}-0"
    try:
        segments = sorted(directory.glob("*.log"))
        entries = []
        for segment in segments:
            for batch in iter_batches(segment.read_bytes()):
                entries.extend((r.offset, r.key, r.value) for r in iter_records(batch))
    except (FileNotFoundError, CorruptMessageError):
        return None
    return entries, int(segments[-1].name[:20])


def compacted_below_active(local: LocalCluster, broker_id: int, topic: str) -> list[Entry] | None:
    """The replica's records once no key appears twice below its active segment (None before)."""
    found = replica_entries(local, broker_id, topic)
    if found is None:
        return None
    entries, active = found
    keys = [key for offset, key, _ in entries if offset < active]
    return entries if len(keys) == len(set(keys)) and keys else None


def latest_by_key(entries: list[Entry]) -> dict[bytes | None, tuple[int, bytes | None]]:
    return {key: (offset, value) for offset, key, value in entries}


def create(zk: KafkaZkClient, topic: str) -> None:
    admin_topics.create_topic(zk, topic, None, None, {0: [0, 1]}, COMPACTED)
    wait_partitions(zk, topic, 1, isr_size=2)


def produce(bootstrap: str, topic: str, pairs: list[tuple[bytes, bytes | None]]) -> list[Rec]:
    records = [Rec(0, key, value) for key, value in pairs]
    return confluent_produce(bootstrap, topic, records).raise_errors("confluent-kafka")


def test_a_compacted_topic_keeps_the_latest_value_of_each_key_at_its_offset(
    compaction_cluster: tuple[LocalCluster, KafkaZkClient],
) -> None:
    local, zk = compaction_cluster
    create(zk, "compacted")
    bootstrap = bootstrap_of(local)
    acked: list[Rec] = []
    for round_ in range(6):
        acked += produce(
            bootstrap, "compacted", [(f"k{i:02d}".encode(), f"v{round_}-{i}".encode() * 8) for i in range(20)]
        )
    time.sleep(0.2)  # the next append is more than segment.ms younger than the active segment: it rolls
    acked += produce(bootstrap, "compacted", [(b"last", b"rolls the segment")])
    expected = {r.key: (r.offset, r.value) for r in acked}

    leader = wait_for(lambda: compacted_below_active(local, 0, "compacted"), 30, what="the leader's compaction")
    follower = wait_for(lambda: compacted_below_active(local, 1, "compacted"), 30, what="the follower's compaction")
    assert len(leader) < len(acked)
    assert latest_by_key(leader) == expected
    assert latest_by_key(follower) == expected
    checkpoint = local.broker_dir(0) / "data" / "cleaner-offset-checkpoint"
    # written once the whole dirty section is clean, after the swaps
    wait_for(lambda: checkpoint.exists() and "\ncompacted 0 " in checkpoint.read_text(), 30, what="the checkpoint")
    assert checkpoint.read_text().startswith("0\n")

    consumed = confluent_consume(bootstrap, "compacted", [0])
    offsets = [r.offset for r in consumed]
    assert offsets == sorted(offsets) and len(consumed) < len(acked)
    assert {r.key: (r.offset, r.value) for r in consumed} == expected
    by_offset = {r.offset: r for r in acked}
    assert all((by_offset[r.offset].key, by_offset[r.offset].value) == (r.key, r.value) for r in consumed)


def test_tombstones_vanish_after_delete_retention(compaction_cluster: tuple[LocalCluster, KafkaZkClient]) -> None:
    local, zk = compaction_cluster
    create(zk, "tombstones")
    bootstrap = bootstrap_of(local)
    produce(bootstrap, "tombstones", [(b"gone", b"1"), (b"kept", b"1")])
    produce(bootstrap, "tombstones", [(b"gone", None)])
    filler = 0

    def tombstone_gone(broker_id: int) -> bool:
        nonlocal filler
        # new filler keeps the log dirty and rolling, as live traffic would, so that the cleaner comes back
        filler += 1
        produce(bootstrap, "tombstones", [(b"filler", str(filler).encode() * 100)])
        found = replica_entries(local, broker_id, "tombstones")
        if found is None:
            return False
        keys = {key for _, key, _ in found[0]}
        return b"gone" not in keys and b"kept" in keys

    seen_tombstone = wait_for(
        lambda: any(
            key == b"gone" and value is None
            for _, key, value in (replica_entries(local, 0, "tombstones") or ([], 0))[0]
        ),
        10,
    )
    assert seen_tombstone
    wait_for(lambda: tombstone_gone(0), 40, interval_s=0.2, what="the tombstone's removal on the leader")
    wait_for(lambda: tombstone_gone(1), 40, interval_s=0.2, what="the tombstone's removal on the follower")
    consumed = confluent_consume(bootstrap, "tombstones", [0])
    keys = [r.key for r in consumed]
    assert b"gone" not in keys and keys[0] == b"kept"


def test_consumer_offsets_stays_bounded_under_a_steady_commit_load(
    compaction_cluster: tuple[LocalCluster, KafkaZkClient],
) -> None:
    from confluent_kafka import Consumer, KafkaException
    from confluent_kafka import TopicPartition as CkTopicPartition

    local, zk = compaction_cluster
    admin_topics.create_topic(zk, "committed", 2, 2, None, {})
    wait_partitions(zk, "committed", 2, isr_size=2)
    consumer = Consumer({"bootstrap.servers": bootstrap_of(local), "group.id": "steady", "enable.auto.commit": False})
    commits = 1500
    try:
        consumer.assign([CkTopicPartition("committed", p) for p in (0, 1)])
        deadline = time.monotonic() + 60
        while True:  # the first commit creates __consumer_offsets and waits for its coordinator
            try:
                consumer.commit(offsets=[CkTopicPartition("committed", p, 0) for p in (0, 1)], asynchronous=False)
                break
            except KafkaException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        for n in range(1, commits):
            consumer.commit(offsets=[CkTopicPartition("committed", p, n) for p in (0, 1)], asynchronous=True)
            consumer.poll(0)
            if n % 200 == 0:
                consumer.commit(offsets=[CkTopicPartition("committed", p, n) for p in (0, 1)], asynchronous=False)
        final = [CkTopicPartition("committed", p, commits) for p in (0, 1)]
        consumer.commit(offsets=final, asynchronous=False)
        assert {tp.partition: tp.offset for tp in consumer.committed(final, timeout=20)} == {0: commits, 1: commits}
    finally:
        consumer.close()

    directory = local.broker_dir(0) / "data" / "__consumer_offsets-0"
    written = commits * 2 * 60  # a record of the group, topic, partition and offset is about this big

    def bounded() -> int | None:
        # the bound asserted below too: a wait for four segments alone let a size between the two through
        size = sum(_size_if_there(path) for path in directory.glob("*.log"))
        return size if size <= 4 * OFFSETS_SEGMENT_BYTES and size < written / 4 else None

    size = wait_for(bounded, 60, 0.3, what="__consumer_offsets compacted down to a few segments")
    assert size < written / 4


def _size_if_there(path: Path) -> int:
    """A segment's size; 0 if the cleaner deleted it (its swap done) between the listing and now."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0

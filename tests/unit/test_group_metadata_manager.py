"""GroupMetadataManager's pure parts (partition choice, loading from batches, expiry, error mapping, the
coordinator epoch) and its cache over a fake replica manager that records what is appended."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kafkaops.cluster.broker.config import parse_broker_config
from kafkaops.cluster.broker.group_metadata_manager import (
    CommitRecordMetadataAndOffset,
    GroupMetadataManager,
    LoadedPartition,
    expired_offsets,
    java_string_hash_code,
    maybe_update_coordinator_epoch,
    partition_for,
    store_group_error,
    store_offsets_error,
)
from kafkaops.cluster.broker.metadata_cache import MetadataCache
from kafkaops.cluster.broker.responses import ProducePartitionResult
from kafkaops.cluster.common import errors
from kafkaops.cluster.log import Log, LogConfig
from kafkaops.cluster.protocol.group_coordinator_records import (
    OffsetAndMetadata,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
    read_message_key,
    read_offset_message_value,
)
from kafkaops.cluster.protocol.records import ControlType, Record, build_batch, build_control_batch, iter_batches
from kafkaops.cluster.protocol.records import iter_records as records_of
from kafkaops.cluster.zk.values import TopicPartition

TP = TopicPartition("t", 0)


@pytest.mark.parametrize(
    ("text", "expected"),
    # Aa/BB collide in Java; an emoji is two UTF-16 units: 0xD83D * 31 + 0xDE00
    [
        ("", 0),
        ("a", 97),
        ("hello", 99162322),
        ("test", 3556498),
        ("Aa", 2112),
        ("BB", 2112),
        ("\U0001f600", 0xD83D * 31 + 0xDE00),
    ],
)
def test_java_string_hash_code(text: str, expected: int) -> None:
    assert java_string_hash_code(text) == expected


def test_partition_for_takes_kafkas_abs() -> None:
    assert partition_for("g", 50) == 103 % 50
    # "polygenelubricants".hashCode() is Integer.MIN_VALUE, whose Utils.abs is 0
    assert java_string_hash_code("polygenelubricants") == -(2**31)
    assert partition_for("polygenelubricants", 7) == 0
    negative = "my-group"
    assert java_string_hash_code(negative) < 0
    assert partition_for(negative, 50) == abs(java_string_hash_code(negative)) % 50


def _commit(offset: int, commit_ts: int, expire: int | None = None) -> CommitRecordMetadataAndOffset:
    return CommitRecordMetadataAndOffset(0, OffsetAndMetadata(offset, None, "", commit_ts, expire))


def test_expiry_follows_kip_211() -> None:
    offsets = {
        TopicPartition("a", 0): _commit(1, 1000),
        TopicPartition("a", 1): _commit(1, 5000),
        TopicPartition("b", 0): _commit(1, 0, expire=3000),  # OffsetCommit v2-v4's retention time
    }
    a0, a1, b0 = offsets
    assert expired_offsets(offsets, 6000, 5000) == [a0, b0]
    # an empty group: retention counts from the time it became empty; an explicit expire timestamp still rules
    assert expired_offsets(offsets, 6000, 5000, base_timestamp=2000) == [b0]
    assert expired_offsets(offsets, 6000, 4000, base_timestamp=2000) == [a0, a1, b0]
    assert expired_offsets(offsets, 2999, 10**9) == []
    assert expired_offsets(offsets, 3000, 10**9) == [b0]
    assert expired_offsets(offsets, 6000, 5000, subscribed_topics=["a"]) == [b0]


def test_append_errors_map_to_coordinator_errors() -> None:
    assert store_offsets_error(errors.NotEnoughReplicasError.code) == errors.CoordinatorNotAvailableError.code
    assert store_offsets_error(errors.NotLeaderOrFollowerError.code) == errors.NotCoordinatorError.code
    assert store_offsets_error(errors.RecordListTooLargeError.code) == errors.InvalidCommitOffsetSizeError.code
    assert store_offsets_error(errors.RequestTimedOutError.code) == errors.RequestTimedOutError.code
    assert store_group_error(errors.RequestTimedOutError.code) == errors.RebalanceInProgressError.code
    assert store_group_error(errors.MessageTooLargeError.code) == errors.UnknownServerError.code
    assert store_group_error(errors.KafkaStorageError.code) == errors.NotCoordinatorError.code


def test_coordinator_epoch_fences_older_loads_and_unloads() -> None:
    epochs: dict[int, int] = {}
    assert maybe_update_coordinator_epoch(epochs, 0, 3) and epochs == {0: 3}
    assert maybe_update_coordinator_epoch(epochs, 0, 3)  # the same epoch passes
    assert not maybe_update_coordinator_epoch(epochs, 0, 2) and epochs == {0: 3}
    assert maybe_update_coordinator_epoch(epochs, 0, None)  # StopReplica without an epoch
    assert maybe_update_coordinator_epoch(epochs, 0, 5) and epochs == {0: 5}


def _batch(records: list[tuple[bytes, bytes | None]], base: int, **kw: Any) -> bytes:
    batch = bytearray(build_batch([Record(i, 1, k, v) for i, (k, v) in enumerate(records)], **kw))
    batch[0:8] = base.to_bytes(8, "big")
    return bytes(batch)


def test_loading_keeps_the_last_value_per_key_and_applies_tombstones() -> None:
    group = {"protocol_type": "consumer", "generation": 1, "protocol": "range", "leader": "m", "members": []}
    log = (
        _batch([(offset_commit_key("g", "t", 0), offset_commit_value(OffsetAndMetadata(1, None, "", 1)))], 0)
        + _batch(
            [
                (offset_commit_key("g", "t", 0), offset_commit_value(OffsetAndMetadata(2, 0, "", 2))),
                (offset_commit_key("g", "t", 1), offset_commit_value(OffsetAndMetadata(9, 0, "", 2))),
                (group_metadata_key("g"), group_metadata_value(group)),
                (offset_commit_key("solo", "t", 0), offset_commit_value(OffsetAndMetadata(4, None, "", 3))),
                (group_metadata_key("gone"), group_metadata_value(group)),
            ],
            1,
        )
        + _batch([(offset_commit_key("g", "t", 1), None), (group_metadata_key("gone"), None)], 6)
    )
    loaded = LoadedPartition()
    assert loaded.add_batches(log) == 8
    by_group = loaded.offsets_by_group()
    assert {g: {tp: c.offset_and_metadata.offset for tp, c in o.items()} for g, o in by_group.items()} == {
        "g": {TopicPartition("t", 0): 2},
        "solo": {TopicPartition("t", 0): 4},
    }
    assert by_group["g"][TopicPartition("t", 0)].append_offset == 1
    assert list(loaded.groups) == ["g"] and loaded.removed_groups == {"gone"}


def test_loading_applies_transactional_offsets_at_their_commit_marker_only() -> None:
    key = offset_commit_key("g", "t", 0)
    txn = {"producer_id": 7, "producer_epoch": 0, "base_sequence": 0, "transactional": True}
    log = (
        _batch([(key, offset_commit_value(OffsetAndMetadata(5, None, "", 1)))], 0, **txn)
        + _batch([(offset_commit_key("g", "t", 1), offset_commit_value(OffsetAndMetadata(6, None, "", 1)))], 1, **txn)
        + build_control_batch(ControlType.ABORT, offset=2, timestamp=1, producer_id=7, producer_epoch=0)
    )
    loaded = LoadedPartition()
    loaded.add_batches(log)
    assert loaded.offsets == {}
    committed = _batch([(key, offset_commit_value(OffsetAndMetadata(8, None, "", 1)))], 3, **txn)
    marker = bytearray(build_control_batch(ControlType.COMMIT, offset=0, timestamp=1, producer_id=7, producer_epoch=0))
    marker[0:8] = (4).to_bytes(8, "big")
    loaded.add_batches(committed + bytes(marker))
    assert loaded.offsets[("g", TopicPartition("t", 0))].offset_and_metadata.offset == 8


# --- the manager over a fake replica manager ------------------------------------------------------------


class FakeReplicaManager:
    def __init__(self, code: int = errors.NONE) -> None:
        self.code = code
        self.appended: list[tuple[TopicPartition, int, bytes]] = []
        self.partitions: dict[TopicPartition, Any] = {}

    async def append_records(self, request: Any, internal_topics_allowed: bool = False) -> list[ProducePartitionResult]:
        assert internal_topics_allowed
        (data,) = request.partitions
        self.appended.append((data.tp, request.acks, bytes(data.records)))
        return [ProducePartitionResult(data.tp, self.code, 40 if self.code == errors.NONE else -1)]

    def records(self) -> list[tuple[Any, Any]]:
        return [
            (read_message_key(r.key), r.value)  # type: ignore[arg-type]
            for _, _, data in self.appended
            for batch in iter_batches(data)
            for r in records_of(batch)
        ]


CONFIG = parse_broker_config(
    {"zookeeper.connect": "zk:2181", "offsets.topic.num.partitions": 4, "offset.metadata.max.bytes": 5}
)


def _manager(code: int = errors.NONE) -> tuple[GroupMetadataManager, FakeReplicaManager]:
    replicas = FakeReplicaManager(code)
    manager = GroupMetadataManager(0, CONFIG, replicas, MetadataCache(), clock=lambda: 1.0)  # type: ignore[arg-type]
    manager._owned.add(manager.partition_for("g"))
    return manager, replicas


def test_store_offsets_appends_with_acks_all_and_caches_once_acknowledged() -> None:
    manager, replicas = _manager()
    offsets = {
        TP: OffsetAndMetadata(3, 1, "ok", 1000),
        TopicPartition("t", 1): OffsetAndMetadata(4, None, "toolong", 1),
    }
    result = asyncio.run(manager.store_offsets("g", offsets))
    assert result == {TP: errors.NONE, TopicPartition("t", 1): errors.OffsetMetadataTooLargeError.code}
    ((tp, acks, _),) = replicas.appended
    assert tp == TopicPartition("__consumer_offsets", partition_for("g", 4)) and acks == -1
    ((key, value),) = replicas.records()
    assert (key.group, key.topic, key.partition) == ("g", "t", 0)
    assert read_offset_message_value(value) == OffsetAndMetadata(3, 1, "ok", 1000)
    assert manager.get_offsets("g") == {TP: OffsetAndMetadata(3, 1, "ok", 1000)}
    assert manager.get_offsets("g", [TP, TopicPartition("u", 0)]) == {TP: offsets[TP], TopicPartition("u", 0): None}
    assert manager.get_offsets("other", [TP]) == {TP: None}
    # plain (topic, partition) pairs work as keys too
    assert asyncio.run(manager.store_offsets("g", {("t", 2): OffsetAndMetadata(8, None, "", 1)})) == {
        TopicPartition("t", 2): errors.NONE
    }
    assert manager.get_offsets("g", [("t", 2)])[TopicPartition("t", 2)] == OffsetAndMetadata(8, None, "", 1)


def test_a_failed_append_caches_nothing_and_answers_the_coordinator_error() -> None:
    manager, _ = _manager(errors.NotLeaderOrFollowerError.code)
    result = asyncio.run(manager.store_offsets("g", {TP: OffsetAndMetadata(3, None, "", 1)}))
    assert result == {TP: errors.NotCoordinatorError.code}
    assert manager.get_offsets("g") == {}
    assert (
        asyncio.run(
            manager.store_group(
                "g", {"protocol_type": "", "generation": 1, "protocol": None, "leader": None, "members": []}
            )
        )
        == errors.NotCoordinatorError.code
    )


def test_group_status_and_standalone_commit_validation() -> None:
    manager, _ = _manager()
    assert manager.group_status_error("g") is None
    other = next(g for g in ("a", "b", "c", "d", "e") if manager.partition_for(g) != manager.partition_for("g"))
    assert manager.group_status_error(other) == errors.NotCoordinatorError.code
    manager._loading.add(manager.partition_for(other))
    assert manager.group_status_error(other) == errors.CoordinatorLoadInProgressError.code
    assert manager.group_status_error("", empty_allowed=False) == errors.InvalidGroupIdError.code
    assert manager.validate_commit("g", "", -1, None) is None
    assert manager.validate_commit("g", "m", 3, None) == errors.IllegalGenerationError.code


def test_delete_offsets_and_groups_write_tombstones() -> None:
    manager, replicas = _manager()
    asyncio.run(manager.store_offsets("g", {TP: OffsetAndMetadata(3, None, "", 1)}))
    group = {"protocol_type": "consumer", "generation": 2, "protocol": None, "leader": None, "members": []}
    assert asyncio.run(manager.store_group("g", group)) == errors.NONE
    assert asyncio.run(manager.delete_offsets("g", [TP, TopicPartition("x", 0)])) == 1
    assert manager.get_offsets("g") == {}
    assert asyncio.run(manager.delete_group("g")) == 0
    tombstones = [(type(k).__name__, v) for k, v in replicas.records()[2:]]
    assert tombstones == [("OffsetKey", None), ("GroupMetadataKey", None)]
    assert replicas.appended[-1][1] == 0  # acks=0, as cleanupGroupMetadata appends


def test_expiry_removes_old_standalone_offsets_with_tombstones() -> None:
    manager, replicas = _manager()
    manager.offsets_retention_ms = 500
    asyncio.run(manager.store_offsets("g", {TP: OffsetAndMetadata(3, None, "", 0)}))
    asyncio.run(manager.store_offsets("g", {TopicPartition("t", 1): OffsetAndMetadata(3, None, "", 900)}))
    assert asyncio.run(manager.cleanup_group_metadata()) == 1  # now is 1000
    assert list(manager.get_offsets("g")) == [TopicPartition("t", 1)]
    key, value = replicas.records()[-1]
    assert (key.topic, key.partition, value) == ("t", 0, None)


def test_resignation_unloads_the_partitions_groups() -> None:
    manager, _ = _manager()
    unloaded: list[str] = []
    manager.on_group_unloaded = unloaded.append
    asyncio.run(manager.store_offsets("g", {TP: OffsetAndMetadata(3, None, "", 1)}))
    partition = manager.partition_for("g")
    manager.on_resignation(partition, 1)
    assert unloaded == ["g"] and manager.get_offsets("g") == {}
    assert manager.group_status_error("g") == errors.NotCoordinatorError.code


def test_election_loads_the_partition_from_its_log_in_chunks(tmp_path: Path) -> None:
    """`on_election` reads the whole log (here one batch per read: a 1-byte load buffer still makes progress),
    answers COORDINATOR_LOAD_IN_PROGRESS meanwhile, then serves what it loaded and tells the coordinator."""
    config = parse_broker_config(
        {"zookeeper.connect": "zk:2181", "offsets.topic.num.partitions": 1, "offsets.load.buffer.size": 1}
    )
    replicas = FakeReplicaManager()
    manager = GroupMetadataManager(0, config, replicas, MetadataCache(), clock=lambda: 1.0)  # type: ignore[arg-type]
    log = Log(tmp_path / "__consumer_offsets-0", LogConfig())
    group = {"protocol_type": "consumer", "generation": 2, "protocol": "range", "leader": "m", "members": []}
    for records in (
        [Record(0, 1, offset_commit_key("g", "t", 0), offset_commit_value(OffsetAndMetadata(1, None, "", 1)))],
        [Record(0, 1, group_metadata_key("g"), group_metadata_value(group))],
        [Record(0, 1, offset_commit_key("g", "t", 0), offset_commit_value(OffsetAndMetadata(7, 3, "x", 2)))],
        [Record(0, 1, offset_commit_key("solo", "t", 1), offset_commit_value(OffsetAndMetadata(4, None, "", 2)))],
    ):
        log.append_as_leader(build_batch(records), 0)
    replicas.partitions[TopicPartition("__consumer_offsets", 0)] = SimpleNamespace(log=log)
    loaded: list[tuple[str, Any]] = []
    manager.on_group_loaded = lambda group_id, value: loaded.append((group_id, value))

    async def elect() -> int | None:
        manager.on_election(0, 5)
        during = manager.group_status_error("g")
        while manager.is_loading:
            await asyncio.sleep(0.01)
        return during

    assert asyncio.run(elect()) == errors.CoordinatorLoadInProgressError.code
    assert manager.group_status_error("g") is None
    assert manager.get_offsets("g") == {TP: OffsetAndMetadata(7, 3, "x", 2)}
    assert manager.get_offsets("solo") == {TopicPartition("t", 1): OffsetAndMetadata(4, None, "", 2)}
    assert sorted(loaded, key=lambda e: e[0]) == [("g", {**group, "current_state_timestamp": -1}), ("solo", None)]
    # an older epoch neither unloads nor loads
    manager.on_resignation(0, 4)
    assert manager.is_group_local("g")
    manager.on_resignation(0, 5)
    assert not manager.is_group_local("g") and manager.get_offsets("g") == {}
    log.close()

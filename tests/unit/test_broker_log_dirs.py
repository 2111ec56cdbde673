"""The broker's pure side of DeleteRecords and of moving replicas between log dirs: the low watermark rule,
DeleteRecords on a leader's real (temporary) log, a follower starting inside a batch, DelayedDeleteRecords
against a fake of the partitions it watches, and the future-log copy steps (reconciliation, copy, log start
and high watermark following, the swap) of replica_alter_log_dirs.py over real logs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkaops.cluster.broker.delayed_delete_records import (
    INVALID_LOW_WATERMARK,
    DelayedDeleteRecords,
    DeleteRecordsPartitionStatus,
)
from kafkaops.cluster.broker.delayed_operation import DelayedOperationPurgatory
from kafkaops.cluster.broker.isr import UNKNOWN_OFFSET, FollowerState, follower_fetched, low_watermark
from kafkaops.cluster.broker.partition import Partition, append_as_follower
from kafkaops.cluster.broker.replica_alter_log_dirs import ReplicaAlterLogDirsManager, copy_step, reconcile
from kafkaops.cluster.common import errors
from kafkaops.cluster.common.errors import NotLeaderOrFollowerError, OffsetOutOfRangeError, PolicyViolationError
from kafkaops.cluster.log import Log, LogConfig, LogManager
from kafkaops.cluster.protocol.records import Record, build_batch, iter_batches, read_header
from kafkaops.cluster.zk.values import TopicPartition
from tests.unit.test_broker_replication_rules import _state as state

TP = TopicPartition("t", 0)
T0 = 1_700_000_000_000


def batch(n: int = 1) -> bytes:
    return build_batch([Record(i, T0, None, b"v%d" % i) for i in range(n)])


@pytest.fixture
def partition(tmp_path: Path) -> Iterator[Partition]:
    log = Log(tmp_path / "t-0", LogConfig())
    yield Partition(TP, 0, log)
    log.close()


def lead_with(partition: Partition, batches: int, size: int = 5) -> None:
    partition.make_leader(state(0, 1, [0]), now_ms=0)
    for _ in range(batches):
        data = batch(size)
        partition.append_as_leader(memoryview(data), read_header(data), 1, 1)
    partition.maybe_increment_high_watermark()


# --- the low watermark -----------------------------------------------------------------------------------


def test_the_low_watermark_is_the_smallest_log_start_offset_of_the_live_replicas() -> None:
    followers = {1: FollowerState(1, 10, log_start_offset=4), 2: FollowerState(2, 10, log_start_offset=2)}
    assert low_watermark(6, followers, alive=lambda _: True) == 2
    assert low_watermark(6, followers, alive=lambda b: b != 2) == 4  # a dead broker does not hold it back
    assert low_watermark(6, followers, alive=lambda _: False) == 6
    assert low_watermark(6, followers, alive=lambda _: False, future_log_start_offset=5) == 5
    # a follower that has not fetched since this broker became leader holds it at -1
    assert low_watermark(6, {1: FollowerState(1)}, alive=lambda _: True) == UNKNOWN_OFFSET


def test_a_fetch_records_the_followers_log_start_offset() -> None:
    state_ = follower_fetched(
        FollowerState(1), fetch_offset=5, leader_log_end_offset=9, fetch_time_ms=1, log_start_offset=3
    )
    assert state_.log_start_offset == 3
    kept = follower_fetched(state_, fetch_offset=6, leader_log_end_offset=9, fetch_time_ms=2)
    assert kept.log_start_offset == 3


# --- DeleteRecords on the leader --------------------------------------------------------------------------


def test_delete_records_moves_the_leaders_log_start_offset(partition: Partition) -> None:
    lead_with(partition, 3)
    assert partition.high_watermark == 15
    assert partition.delete_records_on_leader(7) == 7
    assert partition.log.log_start_offset == 7
    assert partition.delete_records_on_leader(3) == 3  # below the log start: nothing moves, no error
    assert partition.log.log_start_offset == 7
    assert partition.delete_records_on_leader(-1) == 15  # -1: the high watermark
    assert partition.log.log_start_offset == 15


def test_delete_records_errors(partition: Partition, tmp_path: Path) -> None:
    with pytest.raises(NotLeaderOrFollowerError, match="Leader not local for partition t-0 on broker 0"):
        partition.delete_records_on_leader(1)
    lead_with(partition, 1)
    with pytest.raises(
        OffsetOutOfRangeError,
        match="Cannot increment the log start offset to 6 of partition t-0 since it is larger than the high watermark 5",
    ):
        partition.delete_records_on_leader(6)
    with pytest.raises(OffsetOutOfRangeError, match="The offset -2 for partition t-0 is not valid"):
        partition.delete_records_on_leader(-2)
    compacted = Partition(
        TopicPartition("c", 0), 0, Log(tmp_path / "c-0", LogConfig.from_mapping({"cleanup.policy": "compact"}))
    )
    compacted.make_leader(state(0, 1, [0]), now_ms=0)
    with pytest.raises(
        PolicyViolationError, match="Records of partition c-0 can not be deleted due to the configured policy"
    ):
        compacted.delete_records_on_leader(0)
    compacted.log.close()


def test_the_partitions_low_watermark_waits_for_its_followers(partition: Partition) -> None:
    partition.make_leader(state(0, 1, [0, 1], [0, 1]), now_ms=0)
    data = batch(5)
    partition.append_as_leader(memoryview(data), read_header(data), 1, 1)
    partition.follower_fetched(1, 5, 1, log_start_offset=0)
    partition.maybe_increment_high_watermark()
    partition.delete_records_on_leader(3)
    assert partition.low_watermark(lambda _: True) == 0
    partition.follower_fetched(1, 5, 2, log_start_offset=3)
    assert partition.low_watermark(lambda _: True) == 3


def test_only_a_fetch_that_moves_nothing_but_the_clocks_is_taken_at_the_end(partition: Partition) -> None:
    partition.make_leader(state(0, 1, [0, 1], [0, 1, 2]), now_ms=0)
    data = batch(5)
    partition.append_as_leader(memoryview(data), read_header(data), 1, 1)
    assert not partition.follower_fetched_at_end(1, 5, 1, log_start_offset=0)  # the follower's LEO moves
    partition.follower_fetched(1, 5, 1, log_start_offset=0)
    assert partition.maybe_increment_high_watermark()
    assert partition.follower_fetched_at_end(1, 5, 7, log_start_offset=0)  # again at the end: clocks only
    assert partition.followers[1].last_caught_up_ms == 7 and partition.followers[1].last_fetch_time_ms == 7
    assert partition.follower_fetched_at_end(1, 5, 8)  # a fetch without a log start offset keeps it
    assert partition.followers[1].log_start_offset == 0
    assert not partition.follower_fetched_at_end(1, 5, 9, log_start_offset=3)  # the low watermark may move
    assert partition.followers[1].last_fetch_time_ms == 8  # nothing recorded: follower_fetched's to do
    partition.follower_fetched(2, 5, 9)
    assert not partition.follower_fetched_at_end(2, 5, 10)  # outside the ISR: it may join
    assert partition.isr_to_expand() == (0, 1, 2)


def test_a_follower_starting_inside_a_batch_starts_at_the_batch(tmp_path: Path) -> None:
    """The leader's log start offset fell inside a batch (DeleteRecords at 3 of a batch 0..4): a follower
    that starts empty at 3 gets the whole batch, and starts its log at the batch's base (Kafka's
    UnexpectedAppendOffsetException case)."""
    follower = Log(tmp_path / "t-0", LogConfig())
    follower.truncate_fully_and_start_at(3)
    info = append_as_follower(follower, build_batch([Record(i, T0, None, b"x") for i in range(5)]))
    assert info.first_offset == 0 and follower.log_end_offset == 5
    follower.update_high_watermark(5)
    follower.maybe_increment_log_start_offset(3)
    assert follower.log_start_offset == 3
    follower.close()


# --- DelayedDeleteRecords ---------------------------------------------------------------------------------


def test_delayed_delete_records_completes_when_every_low_watermark_arrives() -> None:
    async def scenario() -> None:
        low = {TopicPartition("t", 0): (errors.NONE, 0), TopicPartition("t", 1): (errors.NONE, 2)}
        statuses = {
            TopicPartition("t", 0): DeleteRecordsPartitionStatus(5, errors.NONE, 0),
            TopicPartition("t", 1): DeleteRecordsPartitionStatus(2, errors.NONE, 2),
            TopicPartition("t", 2): DeleteRecordsPartitionStatus(-1, errors.NotLeaderOrFollowerError.code),
        }
        purgatory: DelayedOperationPurgatory[TopicPartition] = DelayedOperationPurgatory("DeleteRecords")
        delayed = DelayedDeleteRecords(30_000, statuses, low.__getitem__)
        assert not purgatory.try_complete_else_watch(delayed)
        low[TopicPartition("t", 0)] = (errors.NONE, 4)
        assert purgatory.check_and_complete(TopicPartition("t", 0)) == 0
        low[TopicPartition("t", 0)] = (errors.NONE, 5)
        assert purgatory.check_and_complete(TopicPartition("t", 0)) == 1
        result = await delayed.result()
        assert [(s.error_code, s.low_watermark) for s in result.values()] == [
            (errors.NONE, 5),
            (errors.NONE, 2),
            (errors.NotLeaderOrFollowerError.code, INVALID_LOW_WATERMARK),
        ]

    asyncio.run(scenario())


def test_delayed_delete_records_times_out_or_loses_leadership() -> None:
    async def scenario() -> None:
        low = {TopicPartition("t", 0): (errors.NONE, 0), TopicPartition("t", 1): (errors.NONE, 0)}
        statuses = {
            TopicPartition("t", 0): DeleteRecordsPartitionStatus(5, errors.NONE, 0),
            TopicPartition("t", 1): DeleteRecordsPartitionStatus(5, errors.NONE, 0),
        }
        purgatory: DelayedOperationPurgatory[TopicPartition] = DelayedOperationPurgatory("DeleteRecords")
        delayed = DelayedDeleteRecords(50, statuses, low.__getitem__)
        purgatory.try_complete_else_watch(delayed)
        low[TopicPartition("t", 1)] = (errors.NotLeaderOrFollowerError.code, -1)
        purgatory.check_and_complete(TopicPartition("t", 1))
        result = await delayed.result()
        assert [(s.error_code, s.low_watermark) for s in result.values()] == [
            (errors.RequestTimedOutError.code, 0),
            (errors.NotLeaderOrFollowerError.code, INVALID_LOW_WATERMARK),
        ]

    asyncio.run(scenario())


# --- the future log ---------------------------------------------------------------------------------------


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[LogManager]:
    log_manager = LogManager([tmp_path / "d1", tmp_path / "d2"])
    log_manager.startup()
    yield log_manager
    log_manager.shutdown()


def future_of(manager: LogManager, current: Log) -> Log:
    manager.maybe_update_preferred_log_dir(current.topic, current.partition, manager.log_dirs[1])
    return manager.get_or_create_future_log(current.topic, current.partition)


def test_copy_steps_copy_batches_epochs_high_watermark_and_log_start(manager: LogManager) -> None:
    current = manager.get_or_create_log("t", 0)
    for epoch in (0, 1, 1, 3):
        current.append_as_leader(batch(4), epoch)
    current.update_high_watermark(12)
    current.maybe_increment_log_start_offset(2)
    future = future_of(manager, current)
    one_batch = len(batch(4))
    while future.log_end_offset < current.log_end_offset:
        assert copy_step(current, future, one_batch) == one_batch  # one batch per step
    assert current.read(2, 1 << 20).records == future.read(2, 1 << 20).records
    assert future.epoch_entries == current.epoch_entries
    assert (future.high_watermark, future.log_start_offset) == (12, 2)
    assert copy_step(current, future, one_batch) == 0


def test_a_future_log_behind_the_log_start_starts_there(manager: LogManager) -> None:
    current = manager.get_or_create_log("t", 0)
    for _ in range(3):
        current.append_as_leader(batch(4), 0)
    current.update_high_watermark(12)
    future = future_of(manager, current)
    current.maybe_increment_log_start_offset(6)  # inside the second batch (4..7)
    copy_step(current, future, 1 << 20)
    assert future.log_end_offset == 12 and future.log_start_offset == 6
    assert [b.header.base_offset for b in iter_batches(future.read(6, 1 << 20).records)] == [4, 8]


def test_reconcile_cuts_a_future_log_that_is_no_longer_a_prefix(manager: LogManager) -> None:
    current = manager.get_or_create_log("t", 0)
    current.append_as_leader(batch(4), 0)
    current.append_as_leader(batch(4), 1)
    future = future_of(manager, current)
    copy_step(current, future, 1 << 20)
    current.truncate_to(4)  # the current log followed a new leader: epoch 1 is gone, epoch 2 follows
    current.append_as_leader(batch(2), 2)
    reconcile(current, future)
    assert future.log_end_offset == 4
    copy_step(current, future, 1 << 20)
    assert future.read(0, 1 << 20).records == current.read(0, 1 << 20).records


def test_the_mover_swaps_in_the_future_log_and_the_truncation_follows(manager: LogManager) -> None:
    async def scenario() -> None:
        current = manager.get_or_create_log("t", 0)
        partition = Partition(TP, 0, current)
        partition.make_leader(state(0, 1, [0]), now_ms=0)
        for _ in range(5):
            data = batch(3)
            partition.append_as_leader(memoryview(data), read_header(data), 1, 1)
        partition.maybe_increment_high_watermark()
        swapped: list[TopicPartition] = []
        mover = ReplicaAlterLogDirsManager(
            manager,
            {TP: partition},
            lambda _: errors.UnknownTopicOrPartitionError.code,
            max_bytes=100,
            swapped=swapped.append,
        )
        assert mover.alter_replica_log_dirs({TP: str(manager.log_dirs[1])}) == {TP: errors.NONE}
        assert partition.future_log is not None and mover.moving(TP)
        described = {d.log_dir: d for d in mover.describe_log_dirs(None)}
        d2 = described[str(manager.log_dirs[1])]
        assert [(r.partition, r.is_future) for r in d2.topics["t"]] == [(0, True)]
        assert d2.topics["t"][0].offset_lag == 15
        for _ in range(200):
            if swapped:
                break
            await asyncio.sleep(0.01)
        assert swapped == [TP]
        assert partition.future_log is None and partition.log.parent_dir == manager.log_dirs[1]
        assert partition.log.log_end_offset == 15 and partition.high_watermark == 15
        assert manager.get_log("t", 0) is partition.log
        await asyncio.sleep(0.1)  # the old dir's deletion runs on the executor
        assert not any(manager.log_dirs[0].glob("t-0*"))
        # errors, as Kafka answers them
        unknown = TopicPartition("u", 0)
        assert mover.alter_replica_log_dirs({TP: "/nowhere", unknown: str(manager.log_dirs[0])}) == {
            TP: errors.LogDirNotFoundError.code,
            unknown: errors.UnknownTopicOrPartitionError.code,
        }
        # a move back to where it is: nothing to do
        assert mover.alter_replica_log_dirs({TP: str(manager.log_dirs[1])}) == {TP: errors.NONE}
        assert partition.future_log is None
        await mover.shutdown()

    asyncio.run(scenario())


def test_an_offline_dir_is_described_with_its_error_and_refuses_moves(
    manager: LogManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    first = manager.get_or_create_log("t", 0)
    second = manager.get_or_create_log("u", 0)
    assert (first.parent_dir, second.parent_dir) == tuple(manager.log_dirs)
    hosted = {TP: Partition(TP, 0, first), TopicPartition("u", 0): Partition(TopicPartition("u", 0), 0, second)}

    def io_error(*args: object) -> int:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "pwrite", io_error)
    monkeypatch.setattr(os, "pwritev", io_error)  # a leader's appends
    with pytest.raises(errors.KafkaOpsError):
        first.append_as_leader(batch(), 0)
    monkeypatch.undo()
    mover = ReplicaAlterLogDirsManager(manager, hosted, lambda _: errors.UnknownTopicOrPartitionError.code)
    described = mover.describe_log_dirs(None)
    assert [(d.log_dir, d.error_code) for d in described] == [
        (str(manager.log_dirs[0]), errors.KafkaStorageError.code),
        (str(manager.log_dirs[1]), errors.NONE),
    ]
    assert described[0].topics == {}
    assert [(r.partition, r.size, r.offset_lag, r.is_future) for r in described[1].topics["u"]] == [(0, 0, 0, False)]
    # only partitions asked for are described; a topic of the dir not asked for is listed without partitions
    assert mover.describe_log_dirs(frozenset())[1].topics == {"u": []}
    u0 = TopicPartition("u", 0)
    assert mover.alter_replica_log_dirs({u0: str(manager.log_dirs[0]), TP: str(manager.log_dirs[1])}) == {
        u0: errors.KafkaStorageError.code,  # the target dir is offline
        TP: errors.KafkaStorageError.code,  # the partition is
    }


def test_the_move_is_throttled_by_replica_alter_log_dirs_io_max_bytes_per_second(manager: LogManager) -> None:
    async def scenario() -> None:
        now = [1000.0]
        current = manager.get_or_create_log("t", 0)
        partition = Partition(TP, 0, current)
        partition.make_leader(state(0, 1, [0]), now_ms=0)
        for _ in range(5):
            data = batch(3)
            partition.append_as_leader(memoryview(data), read_header(data), 1, 1)
        swapped: list[TopicPartition] = []
        mover = ReplicaAlterLogDirsManager(
            manager,
            {TP: partition},
            lambda _: errors.UnknownTopicOrPartitionError.code,
            max_bytes=1,  # one batch per step
            swapped=swapped.append,
            clock=lambda: now[0],
        )
        mover.quota.rate = 10  # bytes/s: one batch is over it for the whole 11 s window
        assert mover.alter_replica_log_dirs({TP: str(manager.log_dirs[1])}) == {TP: errors.NONE}
        future = partition.future_log
        assert future is not None
        for _ in range(500):
            if future.log_end_offset:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)  # rounds of the mover go by: the quota holds it
        assert future.log_end_offset == 3 and not swapped
        mover.quota.rate = 2**63 - 1  # the broker's config removed the throttle
        for _ in range(100):
            if swapped:
                break
            await asyncio.sleep(0.01)
        assert swapped == [TP] and partition.log.log_end_offset == 15
        await mover.shutdown()

    asyncio.run(scenario())

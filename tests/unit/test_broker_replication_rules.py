"""Pure replication rules of the broker: idempotent producers' duplicates, follower truncation, and a
partition's leader bookkeeping over a real (temporary) log."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkaops.cluster.broker.partition import Partition
from kafkaops.cluster.broker.producer_state import NUM_BATCHES_TO_RETAIN, ProducerStateManager, last_sequence
from kafkaops.cluster.broker.replica_fetcher import truncation_offset
from kafkaops.cluster.common.errors import NotEnoughReplicasError, NotLeaderOrFollowerError
from kafkaops.cluster.log import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, Log, LogConfig
from kafkaops.cluster.protocol.records import Record, build_batch, read_header
from kafkaops.cluster.state_change_log import LeaderAndIsrPartitionState
from kafkaops.cluster.zk.values import TopicPartition


def _batch(
    n: int = 1, *, producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1, base_offset: int = 0
) -> bytes:
    records = [Record(base_offset + i, 1_700_000_000_000, None, b"v%d" % i) for i in range(n)]
    return build_batch(
        records,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
    )


# --- producer state ---------------------------------------------------------------------------------


def test_a_retried_batch_is_found_with_its_original_offsets():
    state = ProducerStateManager()
    first = read_header(_batch(3, producer_id=7, producer_epoch=0, base_sequence=0, base_offset=10))
    state.update(first)
    retry = read_header(_batch(3, producer_id=7, producer_epoch=0, base_sequence=0))
    duplicate = state.find_duplicate(retry)
    assert duplicate is not None
    assert (duplicate.first_offset, duplicate.last_offset) == (10, 12)


def test_new_sequences_other_epochs_and_plain_batches_are_not_duplicates():
    state = ProducerStateManager()
    state.update(read_header(_batch(2, producer_id=7, producer_epoch=0, base_sequence=0)))
    assert state.find_duplicate(read_header(_batch(2, producer_id=7, producer_epoch=0, base_sequence=2))) is None
    assert state.find_duplicate(read_header(_batch(2, producer_id=7, producer_epoch=1, base_sequence=0))) is None
    assert state.find_duplicate(read_header(_batch(2, producer_id=8, producer_epoch=0, base_sequence=0))) is None
    assert state.find_duplicate(read_header(_batch(2))) is None


def test_only_the_last_five_batches_are_remembered():
    state = ProducerStateManager()
    for i in range(NUM_BATCHES_TO_RETAIN + 1):
        state.update(read_header(_batch(1, producer_id=1, producer_epoch=0, base_sequence=i, base_offset=i)))
    assert state.find_duplicate(read_header(_batch(1, producer_id=1, producer_epoch=0, base_sequence=0))) is None
    assert state.find_duplicate(read_header(_batch(1, producer_id=1, producer_epoch=0, base_sequence=1))) is not None


def test_a_newer_epoch_resets_the_producer_and_an_older_one_is_ignored():
    state = ProducerStateManager()
    state.update(read_header(_batch(1, producer_id=1, producer_epoch=0, base_sequence=0)))
    state.update(read_header(_batch(1, producer_id=1, producer_epoch=1, base_sequence=0, base_offset=5)))
    state.update(read_header(_batch(1, producer_id=1, producer_epoch=0, base_sequence=9, base_offset=6)))
    found = state.find_duplicate(read_header(_batch(1, producer_id=1, producer_epoch=1, base_sequence=0)))
    assert found is not None and found.first_offset == 5
    assert state.find_duplicate(read_header(_batch(1, producer_id=1, producer_epoch=0, base_sequence=9))) is None


def test_sequences_wrap_like_kafkas():
    header = read_header(_batch(3, producer_id=1, producer_epoch=0, base_sequence=2**31 - 2))
    assert last_sequence(header) == 0


# --- follower truncation (AbstractFetcherThread.getOffsetTruncationState) ---------------------------------


def test_truncation_when_the_leader_knows_nothing_of_our_epoch_goes_to_the_high_watermark():
    assert truncation_offset(
        leader_epoch=UNDEFINED_EPOCH,
        leader_end_offset=UNDEFINED_EPOCH_OFFSET,
        follower_end_for_epoch=(3, 50),
        follower_log_end_offset=60,
        high_watermark=40,
    ) == (40, True)


def test_truncation_at_a_shared_epoch_takes_the_smaller_end():
    # Leader says epoch 3 ended at 45; we hold epoch 3 up to our LEO 60: cut the divergent tail 45..59.
    assert truncation_offset(
        leader_epoch=3,
        leader_end_offset=45,
        follower_end_for_epoch=(3, 60),
        follower_log_end_offset=60,
        high_watermark=40,
    ) == (45, True)


def test_truncation_to_an_epoch_we_never_saw_needs_another_round():
    # The leader answers epoch 4, which we never had: cut to the end of our largest epoch below it.
    assert truncation_offset(
        leader_epoch=4,
        leader_end_offset=80,
        follower_end_for_epoch=(2, 30),
        follower_log_end_offset=60,
        high_watermark=20,
    ) == (30, False)


def test_truncation_without_an_epoch_of_ours_takes_the_leaders_end():
    assert truncation_offset(
        leader_epoch=1,
        leader_end_offset=25,
        follower_end_for_epoch=(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET),
        follower_log_end_offset=60,
        high_watermark=20,
    ) == (25, True)


@given(
    leader_epoch=st.integers(0, 10),
    leader_end=st.integers(0, 1000),
    follower_epoch=st.integers(0, 10),
    follower_end=st.integers(0, 1000),
    leo=st.integers(0, 1000),
)
def test_truncation_never_grows_the_log(leader_epoch, leader_end, follower_epoch, follower_end, leo):
    offset, _ = truncation_offset(
        leader_epoch=leader_epoch,
        leader_end_offset=leader_end,
        follower_end_for_epoch=(follower_epoch, follower_end),
        follower_log_end_offset=leo,
        high_watermark=0,
    )
    assert offset <= leo


# --- a partition's leader bookkeeping over a real log ----------------------------------------------------


@pytest.fixture
def partition(tmp_path: Path) -> Partition:
    log = Log(tmp_path / "t-0", LogConfig())
    yield Partition(TopicPartition("t", 0), 0, log)
    log.close()


def _state(leader: int, epoch: int, isr: list[int], replicas: list[int] | None = None) -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState(
        topic_name="t",
        partition_index=0,
        controller_epoch=1,
        leader=leader,
        leader_epoch=epoch,
        isr=tuple(isr),
        zk_version=0,
        replicas=tuple(replicas or [0, 1, 2]),
    )


def _append(partition: Partition, data: bytes, acks: int = -1, min_isr: int = 1):
    return partition.append_as_leader(memoryview(data), read_header(data), acks, min_isr)


def test_the_high_watermark_waits_for_every_isr_follower(partition):
    partition.make_leader(_state(0, 1, [0, 1, 2]), now_ms=0)
    _append(partition, _batch(5))
    assert partition.high_watermark == 0
    partition.follower_fetched(1, 5, now_ms=1)
    assert not partition.maybe_increment_high_watermark()
    partition.follower_fetched(2, 3, now_ms=1)
    assert partition.maybe_increment_high_watermark() and partition.high_watermark == 3
    assert partition.enough_replicas_reached(5, 2) is None
    partition.follower_fetched(2, 5, now_ms=2)
    partition.maybe_increment_high_watermark()
    assert partition.enough_replicas_reached(5, 2) is True


def test_acks_all_is_refused_before_appending_when_the_isr_is_too_small(partition):
    partition.make_leader(_state(0, 1, [0]), now_ms=0)
    with pytest.raises(NotEnoughReplicasError):
        _append(partition, _batch(1), acks=-1, min_isr=2)
    assert partition.log_end_offset == 0
    assert _append(partition, _batch(1), acks=1, min_isr=2).first_offset == 0


def test_a_follower_refuses_produce(partition):
    partition.make_follower(_state(1, 1, [1, 0]))
    with pytest.raises(NotLeaderOrFollowerError):
        _append(partition, _batch(1))


def test_a_retried_idempotent_batch_is_not_appended_twice(partition):
    partition.make_leader(_state(0, 1, [0]), now_ms=0)
    data = _batch(2, producer_id=5, producer_epoch=0, base_sequence=0)
    first = _append(partition, data)
    again = _append(partition, data)
    assert again.duplicate and (again.first_offset, again.last_offset) == (first.first_offset, first.last_offset)
    assert partition.log_end_offset == 2


def test_a_lagging_follower_leaves_the_isr_and_a_caught_up_one_joins(partition):
    partition.make_leader(_state(0, 1, [0, 1]), now_ms=0)
    _append(partition, _batch(3))
    assert partition.isr_to_shrink(now_ms=10_001, max_lag_ms=10_000) == (0,)
    partition.isr_written((0,), 1)
    assert partition.maybe_increment_high_watermark() and partition.high_watermark == 3
    assert partition.follower_fetched(1, 2, now_ms=10_002) is None  # below the HW: not yet
    assert partition.follower_fetched(1, 3, now_ms=10_003) == (0, 1)


def test_a_pending_isr_expansion_holds_the_high_watermark_for_the_joining_follower(partition):
    partition.make_leader(_state(0, 1, [0]), now_ms=0)
    _append(partition, _batch(2))
    partition.maybe_increment_high_watermark()
    new_isr = partition.follower_fetched(1, 2, now_ms=1)
    assert new_isr == (0, 1)
    partition.pending_isr = new_isr
    _append(partition, _batch(3))
    assert not partition.maybe_increment_high_watermark()  # follower 1 may be elected: wait for it
    assert partition.high_watermark == 2


def test_followers_that_qualified_during_a_pending_write_join_together_after_it(partition):
    partition.make_leader(_state(0, 1, [0], replicas=[0, 1, 2, 3]), now_ms=0)
    _append(partition, _batch(2))
    partition.maybe_increment_high_watermark()
    assert partition.follower_fetched(2, 2, now_ms=1) == (0, 2)
    partition.pending_isr = (0, 2)
    assert partition.follower_fetched(1, 2, now_ms=2) is None  # a write is in flight: wait for it
    assert partition.follower_fetched(3, 1, now_ms=2) is None  # below the HW
    partition.isr_written((0, 2), 1)
    assert partition.isr_to_expand() == (0, 2, 1)  # 3 has not caught up
    partition.follower_fetched(3, 2, now_ms=3)
    assert partition.isr_to_expand() == (0, 2, 1, 3)

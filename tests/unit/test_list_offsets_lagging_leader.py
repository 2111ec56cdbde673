"""KIP-207 on a new leader whose high watermark still lags the start of its epoch (Kafka's
`Partition.fetchOffsetForTimestamp`): a client's ListOffsets for the latest offset, or for a timestamp past
what it may read, gets OFFSET_NOT_AVAILABLE (retriable) instead of an end that later moves backwards from
the client's view; followers and the debug replica still get the log end, and the answer comes once a
follower's fetch lifts the high watermark."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkaops.cluster.broker.partition import Partition
from kafkaops.cluster.broker.replica_manager import (
    CONSUMER_REPLICA_ID,
    DEBUGGING_REPLICA_ID,
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    ReplicaManager,
)
from kafkaops.cluster.common.errors import OffsetNotAvailableError
from kafkaops.cluster.log import Log, LogConfig
from kafkaops.cluster.protocol.records import Record, build_batch
from kafkaops.cluster.zk.values import TopicPartition
from tests.unit.test_broker_replication_rules import _state as state

TP = TopicPartition("t", 0)
T0 = 1_700_000_000_000


@pytest.fixture
def new_leader(tmp_path: Path) -> Iterator[Partition]:
    """A follower that had 5 records, 3 of them known committed, then elected leader (epoch 2, ISR 0 and 1)."""
    log = Log(tmp_path / "t-0", LogConfig())
    partition = Partition(TP, 0, log)
    partition.make_follower(state(1, 1, [1, 0], [1, 0]))
    records = build_batch([Record(i, T0 + i, None, b"v%d" % i) for i in range(5)], partition_leader_epoch=1)
    partition.append_as_follower(records, leader_high_watermark=3, leader_log_start_offset=0)
    partition.make_leader(state(0, 2, [0, 1], [0, 1]), now_ms=0)
    yield partition
    log.close()


def offset(partition: Partition, timestamp: int, replica_id: int = CONSUMER_REPLICA_ID) -> int:
    return ReplicaManager._offset_for(partition, timestamp, replica_id, 2).offset


def test_a_client_asking_the_latest_offset_of_a_lagging_leader_is_told_to_retry(new_leader: Partition) -> None:
    assert (new_leader.high_watermark, new_leader.leader_epoch_start_offset) == (3, 5)
    with pytest.raises(OffsetNotAvailableError) as refused:
        offset(new_leader, LATEST_TIMESTAMP)
    assert refused.value.message == (
        "Failed to fetch offsets for partition t-0 with leader epoch 2 as this partition's high watermark (3) "
        "is lagging behind the start offset from the beginning of this epoch (5)."
    )
    with pytest.raises(OffsetNotAvailableError):
        offset(new_leader, T0 + 4)  # past the high watermark
    assert offset(new_leader, T0 + 1) == 1  # below it: known committed
    assert offset(new_leader, EARLIEST_TIMESTAMP) == 0
    assert offset(new_leader, LATEST_TIMESTAMP, DEBUGGING_REPLICA_ID) == 5
    assert offset(new_leader, LATEST_TIMESTAMP, 1) == 5  # a follower (no isolation level)


def test_the_latest_offset_is_answered_once_the_followers_lift_the_high_watermark(new_leader: Partition) -> None:
    new_leader.follower_fetched(1, 5, now_ms=1)
    assert new_leader.maybe_increment_high_watermark()
    assert offset(new_leader, LATEST_TIMESTAMP) == 5
    assert offset(new_leader, T0 + 4) == 4

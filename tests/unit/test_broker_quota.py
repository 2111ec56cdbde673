"""Replication throttles (KIP-73): which replicas a broker throttles, and the rate meter."""

from __future__ import annotations

from kafkaops.cluster.broker.quota import (
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_REPLICAS,
    UNLIMITED,
    ReplicationQuota,
    parse_rate,
    throttled_partitions,
)


def test_a_broker_throttles_the_partitions_listed_with_its_own_id():
    config = {LEADER_THROTTLED_REPLICAS: "0:1,0:2,1:2,3:1", FOLLOWER_THROTTLED_REPLICAS: "*"}
    assert throttled_partitions(config, LEADER_THROTTLED_REPLICAS, 1) == {0, 3}
    assert throttled_partitions(config, LEADER_THROTTLED_REPLICAS, 2) == {0, 1}
    assert throttled_partitions(config, LEADER_THROTTLED_REPLICAS, 7) == frozenset()
    assert throttled_partitions(config, FOLLOWER_THROTTLED_REPLICAS, 7) is None  # "*": every partition
    assert throttled_partitions({}, FOLLOWER_THROTTLED_REPLICAS, 1) == frozenset()


def test_rates_default_to_unlimited():
    assert parse_rate(None) == UNLIMITED
    assert parse_rate("1000") == 1000
    assert parse_rate("-1") == UNLIMITED


def test_the_quota_is_exceeded_above_the_rate_and_recovers_as_the_window_moves():
    quota = ReplicationQuota(rate=1000)
    quota.record(500, now=100.0)
    assert not quota.exceeded(100.5)
    quota.record(2000, now=100.9)
    assert quota.exceeded(101.0)
    assert not quota.exceeded(100.9 + 12)  # every sample has left the 11-second window


def test_an_unlimited_quota_is_never_exceeded():
    quota = ReplicationQuota()
    quota.record(10**12, now=1.0)
    assert not quota.exceeded(1.0)

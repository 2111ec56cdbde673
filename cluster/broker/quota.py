"""Replication throttles (KIP-73): which replicas are throttled, and a byte-rate meter per direction.

Topic configs name the throttled replicas: `leader.replication.throttled.replicas` lists `partition:broker`
pairs (or `*`) whose *leader-side* copies are throttled when serving followers, and
`follower.replication.throttled.replicas` those whose *follower-side* copies are throttled when fetching.
A broker throttles partition p of a topic if the list holds `p:<its id>` or is `*` (Kafka's
`parseThrottledPartitions`). Broker configs `leader.replication.throttled.rate` and
`follower.replication.throttled.rate` (bytes/s, default Long.MaxValue) set the limits.

Only replicas outside the ISR are throttled (`shouldLeaderThrottle` / `shouldFollowerThrottle`), so a
move cannot starve in-sync replication. The rate is measured like Kafka's `ReplicationQuotaManager`:
bytes over `replication.quota.window.num` (11) one-second samples.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

UNLIMITED = 2**63 - 1
LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
LEADER_THROTTLED_RATE = "leader.replication.throttled.rate"
FOLLOWER_THROTTLED_RATE = "follower.replication.throttled.rate"
ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND = "replica.alter.log.dirs.io.max.bytes.per.second"
"""The rate of copying replicas between a broker's log dirs (KIP-113), for every partition being moved."""
WINDOW_SAMPLES = 11
SAMPLE_S = 1.0


def throttled_partitions(topic_config: Mapping[str, str], key: str, broker_id: int) -> frozenset[int] | None:
    """The partitions of a topic this broker throttles in one direction; None means all of them (`*`)."""
    value = topic_config.get(key, "").strip()
    if not value:
        return frozenset()
    if value == "*":
        return None
    partitions = set()
    for entry in value.split(","):
        partition, _, broker = entry.strip().partition(":")
        if broker.strip() == str(broker_id) and partition.strip().isdigit():
            partitions.add(int(partition))
    return frozenset(partitions)


def parse_rate(value: str | None) -> int:
    if value is None:
        return UNLIMITED
    try:
        rate = int(value)
    except ValueError:
        return UNLIMITED
    return rate if rate >= 0 else UNLIMITED


class ReplicationQuota:
    """A byte rate over a sliding window of one-second samples; `now` in seconds."""

    def __init__(self, rate: int = UNLIMITED) -> None:
        self.rate = rate
        self._samples: deque[tuple[int, int]] = deque()  # (second, bytes)

    def record(self, size: int, now: float) -> None:
        second = int(now // SAMPLE_S)
        if self._samples and self._samples[-1][0] == second:
            self._samples[-1] = (second, self._samples[-1][1] + size)
        else:
            self._samples.append((second, size))
        self._expire(second)

    def _expire(self, second: int) -> None:
        while self._samples and self._samples[0][0] <= second - WINDOW_SAMPLES:
            self._samples.popleft()

    def measured_rate(self, now: float) -> float:
        second = int(now // SAMPLE_S)
        self._expire(second)
        if not self._samples:
            return 0.0
        # Kafka's Rate: the window spans the samples kept, at least one sample long.
        elapsed = max(now - self._samples[0][0] * SAMPLE_S, SAMPLE_S)
        return sum(size for _, size in self._samples) / elapsed

    def exceeded(self, now: float) -> bool:
        return self.rate != UNLIMITED and self.measured_rate(now) > self.rate

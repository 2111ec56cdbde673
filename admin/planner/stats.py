"""Phases 1 and 2: what must move whatever the plan (`normalize_partition`, per partition) and what the
target solver needs to know about each topic (`TopicStats`, mergeable so Spark computes it with a reduce)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from kafkaops.admin.planner.layout import HOLE, Key, Layout, rack_limits

# --- phase 1: normalize --------------------------------------------------------------------------


def normalize_partition(replicas: Sequence[int], layout: Layout) -> tuple[list[int], int]:
    """(slots, kept leader): the replicas as broker indices, HOLE where a replica must move.

    A replica must move when its broker is not a target, or when keeping it would break the rack
    rule; replicas earlier in the list win (the leader first), so the rule is local to the partition
    and Spark can apply it row by row. The kept leader is the first slot's broker, or HOLE.
    """
    index = layout.index
    slots = [index.get(b, HOLE) for b in replicas]
    k = layout.num_racks
    if k > 1:
        rack_of = layout.rack_of
        most, at_most = rack_limits(len(slots), k)
        counts: dict[int, int] = {}
        full = 0
        for i, b in enumerate(slots):
            if b < 0:
                continue
            c = counts.get(rack_of[b], 0) + 1
            if c > most or (c == most and at_most < k and full >= at_most):
                slots[i] = HOLE
                continue
            counts[rack_of[b]] = c
            if c == most:
                full += 1
    return slots, slots[0]


def dropped_for_racks(replicas: Sequence[int], slots: Sequence[int], layout: Layout) -> list[int]:
    """The target brokers (indices) whose replica `normalize_partition` dropped for the rack rule."""
    index = layout.index
    return [index[b] for b, s in zip(replicas, slots, strict=True) if s < 0 and b in index]


# --- phase 2: per-topic statistics ---------------------------------------------------------------


@dataclasses.dataclass
class TopicStats:
    """What the target solver needs to know about a topic, mergeable across Spark partitions."""

    partitions: int = 0
    replicas: int = 0
    rack_high: int = 0  # Σ over partitions of the most replicas one rack may hold
    rack_low: int = 0  # Σ over partitions of the fewest replicas every rack must hold
    forced: int = 0  # replicas that must move whatever the plan (HOLE slots)
    kept: dict[int, int] = dataclasses.field(default_factory=dict)  # broker -> replicas kept there
    leaders: dict[int, int] = dataclasses.field(default_factory=dict)  # broker -> kept leaders
    dropped: dict[int, int] = dataclasses.field(default_factory=dict)  # broker -> HOLEs for the rack rule

    def add(self, slots: Sequence[int], leader: int, num_racks: int, dropped: Sequence[int] = ()) -> None:
        """Count one partition; `dropped` are the target brokers whose replica broke the rack rule."""
        for b in dropped:
            self.dropped[b] = self.dropped.get(b, 0) + 1
        rf = len(slots)
        self.partitions += 1
        self.replicas += rf
        most, _ = rack_limits(rf, num_racks)
        self.rack_high += most
        self.rack_low += rf // num_racks
        kept = self.kept
        for b in slots:
            if b < 0:
                self.forced += 1
            else:
                kept[b] = kept.get(b, 0) + 1
        if leader >= 0:
            self.leaders[leader] = self.leaders.get(leader, 0) + 1

    def merge(self, other: TopicStats) -> TopicStats:
        merged = TopicStats(
            self.partitions + other.partitions,
            self.replicas + other.replicas,
            self.rack_high + other.rack_high,
            self.rack_low + other.rack_low,
            self.forced + other.forced,
            dict(self.kept),
            dict(self.leaders),
            dict(self.dropped),
        )
        for b, c in other.dropped.items():
            merged.dropped[b] = merged.dropped.get(b, 0) + c
        for b, c in other.kept.items():
            merged.kept[b] = merged.kept.get(b, 0) + c
        for b, c in other.leaders.items():
            merged.leaders[b] = merged.leaders.get(b, 0) + c
        return merged


def collect_stats(current: Mapping[Key, Sequence[int]], layout: Layout) -> dict[str, TopicStats]:
    """Phases 1 and 2 over a whole assignment."""
    stats: dict[str, TopicStats] = {}
    k = layout.num_racks
    for (topic, _), replicas in current.items():
        slots, leader = normalize_partition(replicas, layout)
        s = stats.get(topic)
        if s is None:
            s = stats[topic] = TopicStats()
        s.add(slots, leader, k, dropped_for_racks(replicas, slots, layout) if k > 1 else ())
    return stats

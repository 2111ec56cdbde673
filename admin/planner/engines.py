"""The strategies on one machine: `balanced` (the five phases in-process, the `--engine local` of
`--generate`; the Spark job runs the same phases by parts), balancing bytes when partition sizes are
given, and Kafka's own redraw."""

from __future__ import annotations

import dataclasses
import random
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence

from kafkaops.admin.assignment import JavaRandom, assign_replicas_to_brokers
from kafkaops.admin.planner.layout import HOLE, Key, Layout, make_layout, may_take, validate_current
from kafkaops.admin.planner.leaders import (
    RepairRow,
    assign_leaders,
    leaders_balanced,
    needs_leader_repair,
    repair_leaders,
)
from kafkaops.admin.planner.realize import TopicOutcome, realize_topic
from kafkaops.admin.planner.stats import TopicStats, dropped_for_racks, normalize_partition
from kafkaops.admin.planner.targets import LowerBound, Targets, cap_fill, solve_targets, top_brokers


@dataclasses.dataclass(frozen=True)
class Plan:
    """A proposed assignment (only the partitions given, every one of them) and the lower bound."""

    proposed: dict[Key, list[int]]
    bound: LowerBound
    inexact_topics: tuple[str, ...] = ()


def plan_balanced(
    current: Mapping[Key, Sequence[int]],
    brokers: Iterable[int],
    racks: Mapping[int, str] | None = None,
    seed: int = 0,
    sizes: Mapping[Key, int] | None = None,
) -> Plan:
    """The `balanced` strategy on one machine: every partition of `current` gets a new replica list.

    With `sizes` (bytes per partition) the planner balances bytes instead of counts
    (`_plan_by_size`). Raises the errors of `make_layout` and `validate_current`.
    """
    layout = make_layout(brokers, racks)
    validate_current(current, layout)
    if sizes is not None:
        return _plan_by_size(current, layout, sizes, seed)
    by_topic: dict[str, list[tuple[int, list[int], int]]] = defaultdict(list)
    stats: dict[str, TopicStats] = {}
    k = layout.num_racks
    for (topic, pid), replicas in current.items():
        slots, leader = normalize_partition(replicas, layout)
        by_topic[topic].append((pid, slots, leader))
        s = stats.get(topic)
        if s is None:
            s = stats[topic] = TopicStats()
        s.add(slots, leader, k, dropped_for_racks(replicas, slots, layout) if k > 1 else ())
    targets = solve_targets(stats, layout, seed)
    outcomes = [
        realize_topic(t, by_topic[t], targets.replicas[t], targets.leaders[t], layout, seed) for t in sorted(by_topic)
    ]
    outcomes = finish_leaders(outcomes, targets)
    brokers_ = layout.brokers
    proposed = {(o.topic, pid): [brokers_[b] for b in replicas] for o in outcomes for pid, replicas in o.partitions}
    return Plan(proposed, targets.bound, tuple(sorted(o.topic for o in outcomes if not o.exact)))


def finish_leaders(outcomes: list[TopicOutcome], targets: Targets) -> list[TopicOutcome]:
    """Phase 5 over a complete list of outcomes (the local engine; Spark does the same by parts)."""
    counts = [0] * len(targets.broker_leaders)
    for o in outcomes:
        for _, replicas in o.partitions:
            counts[replicas[0]] += 1
    goal, floors = targets.broker_leaders, targets.leader_floors
    if leaders_balanced(counts, targets):
        return outcomes

    def pick(every: bool) -> list[RepairRow]:
        return [
            (o.topic, pid, replicas, lead)
            for o in outcomes
            for (pid, replicas), lead in zip(o.partitions, o.original_leaders, strict=True)
            if every or needs_leader_repair(replicas, counts, goal, floors)
        ]

    fixed = repair_leaders(pick, counts, targets)
    if not fixed:
        return outcomes
    return [
        dataclasses.replace(o, partitions=[(pid, fixed.get((o.topic, pid), r)) for pid, r in o.partitions])
        for o in outcomes
    ]


# --- balancing bytes -----------------------------------------------------------------------------


def _plan_by_size(current: Mapping[Key, Sequence[int]], layout: Layout, sizes: Mapping[Key, int], seed: int) -> Plan:
    """Balance bytes per broker, moving as few bytes as a best-fit heuristic finds.

    Forced moves first; then every broker above the mean sheds, largest first, replicas that fit in
    its excess (so it lands near the mean without overshooting); every hole then goes, largest first,
    to the least-loaded broker that fits it (LPT). Leaders are balanced by count afterwards, across
    the cluster. Replica counts are not balanced in this mode: bytes are the goal.
    """
    rng = random.Random(seed)
    rack_of, k = layout.rack_of, layout.num_racks
    n = len(layout.brokers)
    keys = sorted(current)
    rows: list[list[int]] = []
    originals: list[int] = []
    size = [max(0, int(sizes.get(key, 0))) for key in keys]
    load = [0] * n
    holes: list[tuple[int, int]] = []
    forced = 0
    for i, key in enumerate(keys):
        slots, leader = normalize_partition(current[key], layout)
        rows.append(slots)
        originals.append(leader)
        for pos, b in enumerate(slots):
            if b < 0:
                holes.append((i, pos))
                forced += 1
            else:
                load[b] += size[i]
    total = sum(size[i] * len(rows[i]) for i in range(len(rows)))
    mean = total / n
    # shed: largest replicas that fit in the excess
    on: dict[int, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        for b in row:
            if b >= 0:
                on[b].append(i)
    for b in range(n):
        excess = load[b] - mean
        if excess <= 0:
            continue
        for i in sorted(on[b], key=lambda i: (-size[i], keys[i])):
            if size[i] <= excess and size[i] > 0:
                pos = rows[i].index(b)
                rows[i][pos] = HOLE
                holes.append((i, pos))
                load[b] -= size[i]
                excess -= size[i]
    # place: largest first on the least-loaded broker that fits
    holes.sort(key=lambda h: (-size[h[0]], keys[h[0]], h[1]))
    tiebreak = list(range(n))
    rng.shuffle(tiebreak)
    for i, pos in holes:
        row = rows[i]
        best = min(
            (b for b in range(n) if may_take(row, pos, b, rack_of, k)),
            key=lambda b: (load[b], tiebreak[b]),
            default=HOLE,
        )
        if best < 0:  # no broker fits the rack rule: any broker not in the partition
            best = min((b for b in range(n) if b not in row), key=lambda b: (load[b], tiebreak[b]))
        row[pos] = best
        load[best] += size[i]
    leaders = _leaders_by_count(rows, originals, n, tiebreak)
    brokers = layout.brokers
    proposed = {
        key: [brokers[lead]] + [brokers[b] for b in row if b != lead]
        for key, row, lead in zip(keys, rows, leaders, strict=True)
    }
    return Plan(proposed, LowerBound(forced, 0, 0))


def _leaders_by_count(rows: list[list[int]], originals: list[int], n: int, tiebreak: Sequence[int]) -> list[int]:
    """Leaders balanced by count across the cluster's `n` brokers, keeping the original leaders where
    the counts allow; the +1s to the brokers that lead most now (ties in the seeded `tiebreak`)."""
    held = [0] * n
    for row in rows:
        for b in row:
            held[b] += 1
    fixed, group = cap_fill(len(rows), dict(enumerate(held)))
    room = dict(fixed)
    leading = [0] * n
    for o in originals:
        if o >= 0:
            leading[o] += 1
    plus = top_brokers(group.members, group.extras, leading, tiebreak)
    for b in group.members:
        room[b] = group.base + (b in plus)
    leaders, _ = assign_leaders(rows, originals, room)
    return leaders


# --- Kafka's strategy ----------------------------------------------------------------------------


def plan_kafka(
    current: Mapping[Key, Sequence[int]],
    brokers: Iterable[int],
    racks: Mapping[int, str] | None = None,
    seed: int | None = None,
) -> dict[Key, list[int]]:
    """Kafka 2.8 `calculateAssignment`: every topic redrawn by `assignReplicasToBrokers` from a random
    start, with the replication factor of the topic's first partition and partition ids 0..n-1.

    One `java.util.Random` serves all topics, as Kafka's `AdminUtils.rand` does; Kafka iterates topics
    in hash-map order, we in name order (with `seed`, the same seed gives the same plan). Raises the
    errors of `assign_replicas_to_brokers`.
    """
    ids = sorted(brokers)
    rng = JavaRandom(seed)
    by_topic: dict[str, list[int]] = defaultdict(list)
    for topic, pid in current:
        by_topic[topic].append(pid)
    rack_map = {b: racks[b] for b in ids if racks and b in racks} or None
    proposed: dict[Key, list[int]] = {}
    for topic in sorted(by_topic):
        pids = sorted(by_topic[topic])
        rf = len(current[(topic, pids[0])])
        for pid, replicas in assign_replicas_to_brokers(ids, len(pids), rf, racks=rack_map, rng=rng).items():
            proposed[(topic, pid)] = replicas
    return proposed


def iter_rows(current: Mapping[Key, Sequence[int]]) -> Iterator[tuple[str, int, list[int]]]:
    """(topic, partition, replicas) rows in sorted order: the shape the Spark job reads."""
    for topic, pid in sorted(current):
        yield topic, pid, list(current[(topic, pid)])

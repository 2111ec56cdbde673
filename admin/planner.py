"""Reassignment planning that moves the least data (issue 7): pure functions over plain data.

Kafka's `--generate` redraws every topic from a random start, so adding one broker moves nearly every
replica. This planner keeps what is well placed. In priority order its plan

  (a) uses only the target brokers (a broker left out of the list is decommissioned);
  (b) respects racks: a partition spans min(RF, racks) racks, spread as evenly as RF allows;
  (c) balances replicas per broker across the cluster to within 1, and per topic to within 1
      (where racks of unequal size make that impossible, as even as the racks allow);
  (d) balances leaders (first replicas) to within 1, per topic and across the cluster, by
      reordering replica lists, which moves no data;
  (e) moves the fewest replicas that achieve (a)-(d): a replica moves only off a broker that holds
      more of its topic than its target.

How (the same phases run in-process for `--engine local` and as a Spark job for `--engine spark`,
which is why they are separate functions over picklable values):

1. `normalize_partition` — per partition: the replicas that must move whatever the plan (on a broker
   that is not a target, or a second replica in a rack that must not hold two) become holes.
2. `TopicStats` — per topic: partition and replica counts, replicas kept per broker, leaders kept per
   broker. Mergeable, so Spark computes them with a reduce.
3. `solve_targets` — the exact count of replicas (and leaders) every broker should hold of every
   topic. Per topic the counts are floor/ceil of the fair share (water-filled over racks when racks
   cap a share, with a cap per rack where a small topic's partitions could not host more); the
   cluster's totals are as even as those per-topic bounds allow. Which brokers get a topic's "+1"s
   is a degree-constrained bipartite assignment between topics and brokers, solved greedily so that
   a +1 lands where the topic already has a replica to keep (that saves a move), then improved by a
   bounded local search (a chain of +1s moving between brokers, or the cluster's own +1 moving to
   another broker) while any chain keeps more replicas in place. With exact counts a plan moves
   Σ max(0, kept - target): this is where the moves are decided.
4. `realize_topic` — per topic, independently: which partitions shed a replica from a broker above
   its count (followers before leaders) and which hole or shed each broker below its count receives
   (no broker twice in a partition, rack rule kept); where greedy choice gets stuck, augmenting
   paths re-route earlier placements (no extra move), and only then does a two-partition exchange
   spend one. Then the leaders, by a capacitated matching of partitions to their replicas
   (augmenting paths), keeping the current leader wherever the counts allow.
5. `fix_leaders` — cluster-wide leader repair (reordering only) over the partitions that
   `needs_leader_repair` picks, when per-topic leader counts could not all be met (sparse topics,
   or topics of RF 1, whose leaders are pinned to their replicas).

The lower bound reported next to the moves is the replicas on brokers that are not targets, plus
the largest of: the rack-breaking replicas; Σ over brokers of max(0, held - target) with the +1
targets given to the brokers already holding most (cluster); the same per topic; and both at once
(every +1 that could keep a replica in place, bounded per topic and per broker). No plan that meets
(a)-(c) moves fewer replicas.

Everything is deterministic for a given seed: ties are broken by `random.Random(seed)` (per topic
`random.Random(f"{seed}/{topic}")`), and nothing depends on the order Spark delivers rows in.

Known shortcuts, named openly: the bipartite assignment and the partition-level moves are greedy with
local repair, not an exact min-cost flow (on small random clusters it matches an exact min-cost flow
in about 98% of cases, off by one move otherwise; the benchmark prints moves against the bound);
leaders within 1 can be out of reach when topics of RF 1 sit beside others (their leaders are their
replicas), and balance within 1 when racks differ in size; with partition sizes the planner
balances bytes by a best-fit heuristic, on one machine, and replica counts are then not balanced.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import random
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from kafkaops.admin.assignment import JavaRandom, assign_replicas_to_brokers
from kafkaops.cluster.errors import (
    AdminOperationError,
    InvalidArgumentError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
)

__all__ = [
    "Key",
    "batch_figures",
    "collect_stats",
    "dropped_for_racks",
    "Layout",
    "LowerBound",
    "PlanReport",
    "ReportBuilder",
    "Targets",
    "TopicOutcome",
    "TopicStats",
    "finish_leaders",
    "fix_leaders",
    "leaders_balanced",
    "lower_bound",
    "make_layout",
    "needs_leader_repair",
    "normalize_partition",
    "plan_balanced",
    "plan_kafka",
    "plan_report",
    "realize_topic",
    "solve_targets",
    "split_batches",
    "topic_figures",
    "validate_current",
]

Key = tuple[str, int]
"""A partition: (topic, partition id). Plain tuples, not TopicPartition: a plan has a million of them."""

HOLE = -1
"""A replica slot whose replica must move (its broker is not a target, or it breaks the rack rule)."""

_WINDOW = 24
"""How many candidates a greedy step looks at before falling back to a full scan."""


# --- layout and rules ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Layout:
    """The target cluster: broker ids sorted ascending, and each broker's rack as a small int.

    Inside the planner a broker is its index in `brokers`; `rack_of[i]` is the index of its rack in
    `rack_names` (all 0 when rack-unaware, with `rack_names` empty).
    """

    brokers: tuple[int, ...]
    rack_of: tuple[int, ...]
    rack_names: tuple[str, ...]
    index: dict[int, int] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", {b: i for i, b in enumerate(self.brokers)})

    @property
    def num_racks(self) -> int:
        return max(1, len(self.rack_names))

    @property
    def racks(self) -> dict[int, str] | None:
        if not self.rack_names:
            return None
        return {b: self.rack_names[r] for b, r in zip(self.brokers, self.rack_of, strict=True)}


def make_layout(brokers: Iterable[int], racks: Mapping[int, str] | None = None) -> Layout:
    """The target cluster. `racks` maps broker id -> rack; None (or no target broker with a rack) is
    rack-unaware. Some but not all target brokers with a rack is refused with Kafka's text.

    Raises InvalidArgumentError (no brokers, duplicates), AdminOperationError (partial racks).
    """
    ids = sorted(brokers)
    if not ids:
        raise InvalidArgumentError("The broker list is empty")
    if len(set(ids)) != len(ids):
        raise InvalidArgumentError(
            f"Broker list contains duplicate entries: {sorted({b for b in ids if ids.count(b) > 1})}"
        )
    known = {b: racks[b] for b in ids if racks and racks.get(b) is not None}
    if not known:
        return Layout(tuple(ids), (0,) * len(ids), ())
    if len(known) != len(ids):
        raise AdminOperationError(
            "Not all brokers have rack information. Add --disable-rack-aware in command line "
            "to make replica assignment without rack information."
        )
    names = tuple(sorted(set(known.values())))
    rack_index = {name: i for i, name in enumerate(names)}
    return Layout(tuple(ids), tuple(rack_index[known[b]] for b in ids), names)


def rack_limits(rf: int, num_racks: int) -> tuple[int, int]:
    """(most replicas of one partition a rack may hold, how many racks may hold that many).

    RF <= racks: one per rack. RF > racks: as even as possible, e.g. RF 4 on 3 racks is 2+1+1.
    """
    q, m = divmod(rf, num_racks)
    return (q + 1, m) if m else (q, num_racks)


def _fits(slots: Sequence[int], pos: int, broker: int, rack_of: Sequence[int], num_racks: int) -> bool:
    """May `broker` take slot `pos` of a partition (whatever the slot holds now is leaving)?"""
    for i, s in enumerate(slots):
        if s == broker and i != pos:
            return False
    if num_racks == 1:
        return True
    rack = rack_of[broker]
    rf = len(slots)
    if rf <= num_racks:
        return all(i == pos or s < 0 or rack_of[s] != rack for i, s in enumerate(slots))
    most, at_most = rack_limits(rf, num_racks)
    counts: dict[int, int] = {}
    for i, s in enumerate(slots):
        if i != pos and s >= 0:
            counts[rack_of[s]] = counts.get(rack_of[s], 0) + 1
    mine = counts.get(rack, 0) + 1
    if mine > most:
        return False
    return not (mine == most and at_most < num_racks and sum(1 for c in counts.values() if c == most) >= at_most)


def rack_span_violation(replicas: Sequence[int], racks: Mapping[int, str], num_racks: int) -> bool:
    """A partition spanning fewer racks than min(RF, racks) (the report's "rack violation")."""
    known = [racks[b] for b in replicas if b in racks]
    return len(known) == len(replicas) and len(set(known)) < min(len(replicas), num_racks)


# --- input checks --------------------------------------------------------------------------------


def validate_current(current: Mapping[Key, Sequence[int]], layout: Layout) -> None:
    """Refuse an assignment the planner cannot honour, before any work.

    Raises InvalidReplicaAssignmentError (an empty replica list, a broker twice in one partition, with
    Kafka's reassignment texts) and InvalidReplicationFactorError (a partition with more replicas than
    target brokers, Kafka's `Replication factor: 3 larger than available brokers: 2.`).
    """
    n = len(layout.brokers)
    most = 0
    for (topic, partition), replicas in current.items():
        if not replicas:
            raise InvalidReplicaAssignmentError("Partition replica list cannot be empty")
        if len(set(replicas)) != len(replicas):
            doubled = sorted({b for b in replicas if list(replicas).count(b) > 1})
            raise InvalidReplicaAssignmentError(
                "Partition replica lists may not contain duplicate entries: "
                f"{topic}-{partition} contains multiple entries for {','.join(map(str, doubled))}"
            )
        most = max(most, len(replicas))
    if most > n:
        raise InvalidReplicationFactorError(f"Replication factor: {most} larger than available brokers: {n}.")


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


# --- phase 3: targets ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Group:
    """Brokers that share one fair share of a topic: each holds `base`, `extras` of them one more."""

    members: tuple[int, ...]
    base: int
    extras: int


def _rack_members(layout: Layout) -> list[tuple[int, ...]]:
    members: list[list[int]] = [[] for _ in range(layout.num_racks)]
    for b, r in enumerate(layout.rack_of):
        members[r].append(b)
    return [tuple(m) for m in members]


def _water_fill(total: int, racks: Sequence[tuple[int, ...]], low: int, high: int) -> list[_Group]:
    """Split `total` replicas over racks, each rack's share kept within [low, high], then over brokers.

    A rack whose fair share (by broker count) exceeds `high` is capped, one below `low` raised; the
    other racks share the rest evenly. With one rack this is floor/ceil over all brokers.
    """
    fixed: dict[int, int] = {}
    while True:
        free = [r for r in range(len(racks)) if r not in fixed]
        if not free:
            break
        n_free = sum(len(racks[r]) for r in free)
        remaining = total - sum(fixed.values())
        # a share exactly on a bound is fixed too: then every partition must meet it, rack by rack
        capped = [r for r in free if len(racks[r]) * remaining >= high * n_free]
        floored = [] if capped else [r for r in free if len(racks[r]) * remaining <= low * n_free]
        if not capped and not floored:
            break
        for r in capped or floored:
            fixed[r] = high if capped else low
        if len(fixed) == len(racks) and sum(fixed.values()) != total:  # both bounds touched: undo
            fixed = {r: v for r, v in fixed.items() if r not in (capped or floored)}
            break
    free = [r for r in range(len(racks)) if r not in fixed]
    remaining = total - sum(fixed.values())
    if remaining < 0 or (not free and remaining):  # inconsistent bounds: fall back to one pool
        everyone = tuple(b for members in racks for b in members)
        return [_Group(everyone, *divmod(total, len(everyone)))]
    groups = [_Group(racks[r], *divmod(fixed[r], len(racks[r]))) for r in sorted(fixed)]
    if free:
        pool = racks[free[0]] if len(free) == 1 else tuple(sorted(b for r in free for b in racks[r]))
        groups.append(_Group(pool, *divmod(remaining, len(pool))))
    return groups


def _cap_fill(total: int, caps: Mapping[int, int]) -> tuple[dict[int, int], _Group]:
    """Split `total` over brokers, each at most its cap: those below the level are fixed at their cap
    (all of it), the rest share evenly. Returns (fixed broker -> count, group of the rest)."""
    items = sorted((c, b) for b, c in caps.items() if c > 0)
    fixed: dict[int, int] = {}
    remaining = total
    i = 0
    while i < len(items) and items[i][0] * (len(items) - i) <= remaining:
        fixed[items[i][1]] = items[i][0]
        remaining -= items[i][0]
        i += 1
    free = tuple(sorted(b for _, b in items[i:]))
    if not free:
        return fixed, _Group((), 0, 0)
    return fixed, _Group(free, *divmod(remaining, len(free)))


def _top(
    members: Sequence[int], count: int, weight: Mapping[int, int] | Sequence[int], order: Sequence[int]
) -> set[int]:
    """The `count` members with the highest weight; ties by the seeded broker order."""
    if count <= 0:
        return set()
    return set(heapq.nsmallest(count, members, key=lambda b: (-weight[b], order[b])))


@dataclasses.dataclass(frozen=True)
class LowerBound:
    """No plan that meets the balance goal moves fewer replicas than `total`."""

    forced: int  # replicas on brokers that are not targets
    cluster: int  # Σ over brokers of max(0, held - cluster target)
    per_topic: int  # Σ over topics and brokers of max(0, held - topic target)
    combined: int = 0  # both at once: Σ max(0, held - per-topic floor) - most +1s that can keep a replica
    rack: int = 0  # second replicas in a rack that must not hold two: one of them moves

    @property
    def total(self) -> int:
        # "held" counts a rack-breaking replica as held: moving its partner instead is one move too
        return self.forced + max(self.rack, self.cluster, self.per_topic, self.combined)


@dataclasses.dataclass(frozen=True)
class Targets:
    """What every broker should hold: per topic (`replicas[t][b]`, `leaders[t][b]`, broker indices,
    zeros left out) and cluster-wide. `flagged` topics could not all get their +1s where the cluster
    counts wanted them; `fix_leaders` repairs leader counts over those topics."""

    replicas: dict[str, dict[int, int]]
    leaders: dict[str, dict[int, int]]
    broker_replicas: tuple[int, ...]
    broker_leaders: tuple[int, ...]  # most leaders a broker may hold (the level + 1 where the +1 may go)
    bound: LowerBound
    flagged: frozenset[str]
    leader_floors: tuple[int, ...] = ()  # fewest leaders a broker may hold


@dataclasses.dataclass
class _Optional:
    """The cluster's "+1"s: `holders` get one more than the level, any of `candidates` could instead.

    The solver may hand a +1 from one holder to another candidate when that keeps a replica (or a
    leader) in place: the cluster stays within 1 either way.
    """

    holders: set[int]
    candidates: set[int]
    level: int  # every candidate's target without a +1


def _bounded_fill(
    total: int,
    low: Sequence[int],
    high: Sequence[int],
    weight: Sequence[int],
    order: Sequence[int],
    reserve: Sequence[tuple[Sequence[int], int]] = (),
) -> tuple[list[int], _Optional]:
    """Split `total` over brokers as evenly as each broker's [low, high] allows.

    The largest level q with Σ clamp(q, low, high) <= total; the remainder goes, one each, to brokers
    that can rise from q to q + 1, those with the highest `weight` first (ties in the seeded `order`).
    `reserve` lists (brokers, room above `low` they need together): a rack whose topics must place
    that many +1s inside it gets its remainder first.
    """
    n = len(low)

    def filled(q: int) -> int:
        return sum(min(max(q, lo), hi) for lo, hi in zip(low, high, strict=True))

    a, b = min(low, default=0), max(high, default=0)
    while a < b:  # largest q in [a, b] with filled(q) <= total
        mid = (a + b + 1) // 2
        if filled(mid) <= total:
            a = mid
        else:
            b = mid - 1
    target = [min(max(a, lo), hi) for lo, hi in zip(low, high, strict=True)]
    candidates = {x for x in range(n) if low[x] <= a < high[x]}
    rest = total - sum(target)
    holders: set[int] = set()
    for members, needed in reserve:
        deficit = needed - sum(target[x] - low[x] for x in members)
        if deficit > 0 and rest > 0:
            chosen = _top(sorted(x for x in members if x in candidates), min(deficit, rest), weight, order)
            holders |= chosen
            rest -= len(chosen)
    holders |= _top(sorted(candidates - holders), rest, weight, order)
    for x in holders:
        target[x] += 1
    return target, _Optional(set(holders), candidates, a)


@dataclasses.dataclass(frozen=True)
class _ReplicaCounts:
    """Per-topic groups, cluster targets and the lower bound: shared by the solver and the report."""

    groups: dict[str, list[_Group]]
    cluster: list[int]
    optional: _Optional
    kept: list[int]
    bound: LowerBound


def _replica_counts(stats: Mapping[str, TopicStats], layout: Layout, order: Sequence[int]) -> _ReplicaCounts:
    """Per topic: the fair share of every broker (floor/ceil, water-filled over racks). Cluster-wide:
    each broker's total is at least the sum of its per-topic floors and at most that plus the topics
    that may give it a +1; within those bounds as even as possible, the +1s to brokers keeping most."""
    n = len(layout.brokers)
    racks = _rack_members(layout)
    kept = [0] * n
    low = [0] * n
    extra_everywhere = 0  # topics whose +1s may go to any broker: counted once, not per broker
    extra_some = [0] * n
    groups: dict[str, list[_Group]] = {}
    per_topic = total = above_floor = 0
    # +1s that would keep a replica: per topic group at most its +1s and the brokers keeping more
    # than the floor; per broker at most its most +1s. `node_side` sums the first, `wanted` counts
    # the second's demand.
    node_side = 0
    wanted = [0] * n
    rack_index = {members: r for r, members in enumerate(racks)}
    rack_extras: dict[int, int] = {}  # +1s of topics whose share of a rack is fixed, by rack
    held_total = [0] * n  # kept, plus the replicas dropped for the rack rule (for the bound)
    for t in sorted(stats):
        s = stats[t]
        total += s.replicas
        for b, c in s.kept.items():
            kept[b] += c
            held_total[b] += c
        held_of = s.kept
        if s.dropped:
            held_of = dict(s.kept)
            for b, c in s.dropped.items():
                held_of[b] = held_of.get(b, 0) + c
                held_total[b] += c
        groups[t] = _water_fill(s.replicas, racks, s.rack_low, s.rack_high)
        for g in groups[t]:
            if g.base:
                for b in g.members:
                    low[b] += g.base
            if g.extras:
                if len(g.members) == n:
                    extra_everywhere += 1
                else:
                    for b in g.members:
                        extra_some[b] += 1
                    if layout.num_racks > 1 and g.members in rack_index:  # a rack's share, fixed
                        rack_extras[rack_index[g.members]] = rack_extras.get(rack_index[g.members], 0) + g.extras
            held = sorted((held_of.get(b, 0) for b in g.members), reverse=True)
            per_topic += sum(max(0, h - g.base - (i < g.extras)) for i, h in enumerate(held) if h)
            above_floor += sum(h - g.base for h in held if h > g.base)
            if g.extras:
                keeping = [b for b in g.members if held_of.get(b, 0) > g.base]
                node_side += min(g.extras, len(keeping))
                for b in keeping:
                    wanted[b] += 1
    high = [lo + extra_everywhere + extra for lo, extra in zip(low, extra_some, strict=True)]
    reserve = [(members, rack_extras[r]) for r, members in enumerate(racks) if rack_extras.get(r)]
    cluster, optional = _bounded_fill(total, low, high, kept, order, reserve)
    most = [
        (optional.level + 1 if b in optional.candidates else cluster[b]) - low[b] for b in range(n)
    ]  # the most +1s broker b can take, whichever brokers carry the cluster's +1s
    broker_side = sum(min(w, m) for w, m in zip(wanted, most, strict=True))
    rack = sum(c for s in stats.values() for c in s.dropped.values())
    # the cluster bound with the +1s where the most replicas are held (not where the plan puts them)
    held_cluster = cluster if not rack else _bounded_fill(total, low, high, held_total, order, reserve)[0]
    bound = LowerBound(
        sum(s.forced for s in stats.values()) - rack,
        sum(max(0, k - t) for k, t in zip(held_total, held_cluster, strict=True)),
        per_topic,
        max(0, above_floor - min(node_side, broker_side)),
        rack,
    )
    return _ReplicaCounts(groups, cluster, optional, kept, bound)


def lower_bound(stats: Mapping[str, TopicStats], layout: Layout) -> LowerBound:
    """The bound the report prints beside the moves (see the module docstring).

    Independent of the seed: ties among brokers keeping equally many replicas change nothing.
    """
    return _replica_counts(stats, layout, list(range(len(layout.brokers)))).bound


@dataclasses.dataclass
class _Node:
    """One topic (group) asking for `demand` +1s among `eligible` brokers (None: all brokers),
    preferring `preferred` (a +1 there keeps a replica or a leader in place). `rack_room` caps the
    +1s per rack (None: no cap), where a small topic's partitions could not host more."""

    topic: str
    eligible: frozenset[int] | None
    demand: int
    preferred: list[int]
    rack_room: dict[int, int] | None = None


class _Choices:
    """Which brokers every node has taken, and the one rule for what a node may take."""

    def __init__(self, nodes: list[_Node], budget: list[int], rack_of: Sequence[int]) -> None:
        self.nodes = nodes
        self.budget = budget
        self.rack_of = rack_of
        self.chosen: list[list[int]] = [[] for _ in nodes]
        self.used: list[set[int]] = [set() for _ in nodes]
        self.in_rack: list[dict[int, int]] = [{} for _ in nodes]
        self.need = [node.demand for node in nodes]

    def allowed(self, i: int, b: int, leaving: int = HOLE) -> bool:
        """May node i take broker b (giving up `leaving` at the same time)? Budget aside."""
        node = self.nodes[i]
        if b in self.used[i] or (node.eligible is not None and b not in node.eligible):
            return False
        room = node.rack_room
        if room is None:
            return True
        r = self.rack_of[b]
        taken = self.in_rack[i].get(r, 0) - (leaving >= 0 and self.rack_of[leaving] == r)
        return taken < room.get(r, 0)

    def take(self, i: int, b: int) -> None:
        self.chosen[i].append(b)
        self.used[i].add(b)
        self.in_rack[i][self.rack_of[b]] = self.in_rack[i].get(self.rack_of[b], 0) + 1
        self.budget[b] -= 1
        self.need[i] -= 1

    def swap(self, i: int, old: int, new: int) -> None:
        """Node i holds `new` instead of `old` (budgets are the caller's business)."""
        self.chosen[i][self.chosen[i].index(old)] = new
        self.used[i].discard(old)
        self.used[i].add(new)
        rack = self.in_rack[i]
        rack[self.rack_of[old]] -= 1
        rack[self.rack_of[new]] = rack.get(self.rack_of[new], 0) + 1


def _assign_extras(
    nodes: list[_Node],
    budget: list[int],
    rng: random.Random,
    optional: _Optional | None = None,
    rack_of: Sequence[int] | None = None,
) -> tuple[list[list[int]], set[int]]:
    """Give every node `demand` distinct eligible brokers, each broker taking `budget[b]` in all.

    A degree-constrained bipartite assignment. Greedy in three phases: (A) preferred brokers, first
    where no other node competes for the budget, then round-robin over the nodes so that no topic is
    left with all its +1s to place on the few brokers that still have budget; (B) the rest,
    constrained nodes first, from a sequence in which every broker's budget is spread evenly; (C)
    exchanges (node m gives broker b to the stuck node and takes a broker with budget left). A node
    that still falls short takes brokers beyond their budget and is reported in the returned set.
    Then `_improve` trades +1s on brokers a node does not prefer for ones it does.

    `optional` (mutated) lets the improvement move the cluster's +1s between candidate brokers;
    `budget` is adjusted to match. `rack_of` is needed when a node has a `rack_room`.
    """
    n = len(budget)
    state = _Choices(nodes, budget, rack_of if rack_of is not None else [0] * n)
    need, allowed, take = state.need, state.allowed, state.take

    # (A) preferred brokers
    wanted = [0] * n
    for node in nodes:
        for b in node.preferred:
            wanted[b] += 1
    initial = list(budget)
    contended: dict[int, list[int]] = {}
    for i, node in enumerate(nodes):
        rest = []
        for b in node.preferred:
            if not need[i]:
                break
            if wanted[b] <= initial[b] and allowed(i, b):  # enough budget for every node preferring b
                take(i, b)
            elif budget[b] > 0:
                rest.append(b)
        if need[i] and rest:
            rng.shuffle(rest)
            contended[i] = rest
    queue = deque(sorted(contended))
    cursor = dict.fromkeys(contended, 0)
    while queue:
        i = queue.popleft()
        cands = contended[i]
        j = cursor[i]
        while j < len(cands) and (budget[cands[j]] <= 0 or not allowed(i, cands[j])):
            j += 1
        if j < len(cands):
            take(i, cands[j])
            j += 1
        cursor[i] = j
        if need[i] and j < len(cands):
            queue.append(i)

    # (B) the rest: constrained nodes first (fewest spare choices), then a budget-spread sequence
    short: list[int] = []
    restricted = sorted(
        (i for i in range(len(nodes)) if need[i] and (nodes[i].eligible is not None or nodes[i].rack_room)),
        key=lambda i: (len(nodes[i].eligible or range(n)) - need[i], i),
    )
    for i in restricted:
        eligible = nodes[i].eligible
        options = sorted(
            (b for b in (eligible if eligible is not None else range(n)) if budget[b] > 0),
            key=lambda b: (-budget[b], b),
        )
        for b in options:
            if not need[i]:
                break
            if allowed(i, b):
                take(i, b)
        if need[i]:
            short.append(i)
    open_nodes = [i for i in range(len(nodes)) if need[i] and nodes[i].eligible is None and not nodes[i].rack_room]
    if open_nodes:
        perm = list(range(n))
        rng.shuffle(perm)
        units = sorted(((j + 0.5) / budget[b], perm[b], b) for b in range(n) if budget[b] > 0 for j in range(budget[b]))
        sequence = deque(b for _, _, b in units)
        skipped: list[int] = []
        for i in open_nodes:
            kept_aside = []
            for b in skipped:
                if need[i] and budget[b] > 0 and allowed(i, b):
                    take(i, b)
                elif budget[b] > 0:
                    kept_aside.append(b)
            skipped = kept_aside
            while need[i] and sequence:
                b = sequence.popleft()
                if budget[b] <= 0:
                    continue
                if allowed(i, b):
                    take(i, b)
                else:
                    skipped.append(b)
            if need[i]:
                short.append(i)

    # (C) exchanges, then over-budget as a last resort (rack caps too, if nothing else is left)
    violated: set[int] = set()
    for i in short:
        while need[i] and _exchange(i, state):
            pass
        if need[i]:
            eligible = nodes[i].eligible
            pool = [b for b in (eligible if eligible is not None else range(n)) if b not in state.used[i]]
            pool.sort(key=lambda b: (not allowed(i, b), -budget[b], b))
            for b in pool[: need[i]]:
                take(i, b)
            violated.add(i)
    _improve(state, optional)
    return state.chosen, violated


_IMPROVE_WORK = 400_000
"""Bound on the candidate checks of the local search, so that it stays linear at scale."""


def _improve(state: _Choices, optional: _Optional | None) -> None:
    """Local search on the +1s: node i swaps a broker c it does not prefer for a preferred broker p.

    Broker p then holds one +1 too many. That is resolved (depth-first, at most three steps) by p's
    budget, by the cluster's optional +1 moving to p (from c, or from a holder h that then sheds a
    +1), or by another node m moving its +1 from p to a broker it prefers at least as much — which
    may push the surplus on. A chain is applied only if it keeps more replicas (or leaders) in place
    in all; every count stays within its bounds. Repeats while anything improves, within a budget.
    """
    nodes, chosen, used, budget = state.nodes, state.chosen, state.used, state.budget
    prefs = [set(node.preferred) for node in nodes]
    users: dict[int, dict[int, None]] = defaultdict(dict)  # broker -> nodes holding a +1 there
    for i, picks in enumerate(chosen):
        for b in picks:
            users[b][i] = None
    work = 0

    def move(m: int, old: int, new: int) -> None:
        state.swap(m, old, new)
        del users[old][m]
        users[new][m] = None

    def resolve(y: int, c: int, gain: int, depth: int, trail: list[tuple[str, int, int, int]]) -> list | None:
        """Broker y has one +1 too many and c one too few; find steps with total gain > 0."""
        nonlocal work
        if y == c:
            return trail if gain > 0 else None
        if budget[y] > 0 and budget[c] >= 0 and gain > 0:
            return [*trail, ("spare", y, c, 0)]
        if optional is not None and y in optional.candidates and y not in optional.holders:
            if c in optional.holders and gain > 0:
                return [*trail, ("optional", c, y, 0)]
            if depth < 3:
                for h in list(optional.holders):
                    work += 1
                    if h == y or work > _IMPROVE_WORK or any(h in step[1:] for step in trail):
                        continue
                    found = resolve(h, c, gain, depth + 1, [*trail, ("optional", h, y, 0)])
                    if found:
                        return found
        moved = {step[1] for step in trail if step[0] == "move"}
        for m in list(users[y]):
            work += 1
            if work > _IMPROVE_WORK:
                return None
            if m in moved:  # each node moves at most once in a chain, so the chain stays consistent
                continue
            w_old = y in prefs[m]
            if state.allowed(m, c, leaving=y) and gain - w_old + (c in prefs[m]) > 0:
                return [*trail, ("move", m, y, c)]
            if depth < 3:
                for z in nodes[m].preferred:
                    if z == y or any(z in step[2:] for step in trail) or not state.allowed(m, z, leaving=y):
                        continue
                    work += 1
                    found = resolve(z, c, gain - w_old + 1, depth + 1, [*trail, ("move", m, y, z)])
                    if found:
                        return found
        return None

    for _ in range(8):
        improved = False
        for i, node in enumerate(nodes):
            if work > _IMPROVE_WORK:
                return
            for p in node.preferred:
                if p in used[i]:
                    continue
                steps = None
                for c in [c for c in chosen[i] if c not in prefs[i]]:
                    if not state.allowed(i, p, leaving=c):
                        continue
                    steps = resolve(p, c, 1, 0, [("move", i, c, p)])
                    if steps:
                        break
                if not steps:
                    continue
                for kind, a, b_, c_ in steps:
                    if kind == "move":
                        move(a, b_, c_)
                    elif kind == "optional" and optional is not None:  # the cluster's +1: from a to b_
                        optional.holders.discard(a)
                        optional.holders.add(b_)
                    else:  # spare budget at a absorbs the surplus, c's freed unit becomes spare
                        budget[a] -= 1
                        budget[b_] += 1
                improved = True
        if not improved:
            break


def _exchange(i: int, state: _Choices) -> bool:
    """Node i needs one more broker but every broker with budget left is one it may not take: find a
    node m holding a broker b that i may take, and let m take a spare broker c instead."""
    budget, chosen = state.budget, state.chosen
    for c in [c for c in range(len(budget)) if budget[c] > 0]:
        for m in range(len(state.nodes)):
            if m == i:
                continue
            for b in list(chosen[m]):
                if state.allowed(i, b) and state.allowed(m, c, leaving=b):
                    state.swap(m, b, c)
                    budget[c] -= 1
                    budget[b] += 1
                    state.take(i, b)
                    return True
    return False


def solve_targets(stats: Mapping[str, TopicStats], layout: Layout, seed: int = 0) -> Targets:
    """Exact replica and leader counts per topic and broker (phase 3, see the module docstring).

    Runs on one machine even for the Spark engine: its input is one small record per (topic, broker).
    """
    rng = random.Random(seed)
    n = len(layout.brokers)
    order = list(range(n))
    rng.shuffle(order)
    topics = sorted(stats)

    # replicas: per-topic groups and cluster targets, then where each topic's +1s go
    counts_ = _replica_counts(stats, layout, order)
    budget = list(counts_.cluster)
    nodes: list[_Node] = []
    everyone = frozenset(range(n))
    replicas: dict[str, dict[int, int]] = {}
    for t in topics:
        s = stats[t]
        counts: dict[int, int] = {}
        for g in counts_.groups[t]:
            if g.base:
                for b in g.members:
                    counts[b] = g.base
                    budget[b] -= g.base
            if g.extras:
                members = frozenset(g.members) if len(g.members) < n else everyone
                preferred = [b for b, c in s.kept.items() if c > g.base and b in members]
                preferred.sort(key=lambda b: order[b])
                room = _rack_room(g, s, layout)
                nodes.append(_Node(t, None if members is everyone else members, g.extras, preferred, room))
        replicas[t] = counts
    chosen, violated = _assign_extras(nodes, budget, rng, counts_.optional, layout.rack_of)
    cluster = _with_holders(counts_.cluster, counts_.optional)
    for node, picks in zip(nodes, chosen, strict=True):
        counts = replicas[node.topic]
        for b in picks:
            counts[b] = counts.get(b, 0) + 1
    flagged = {nodes[i].topic for i in violated}

    # leaders: per topic at most the replicas a broker holds (water-filled), cluster-wide as even as
    # those per-topic bounds allow, the +1s to brokers keeping most leaders
    kept_leaders = [0] * n
    low = [0] * n
    extra = [0] * n
    leader_groups: dict[str, tuple[dict[int, int], _Group]] = {}
    for t in topics:
        s = stats[t]
        for b, c in s.leaders.items():
            kept_leaders[b] += c
        fixed, group = _cap_fill(s.partitions, replicas[t])
        leader_groups[t] = (fixed, group)
        for b, c in fixed.items():
            low[b] += c
        for b in group.members:
            low[b] += group.base
            extra[b] += group.extras > 0
    n_leaders = sum(s.partitions for s in stats.values())
    cluster_leaders, leader_optional = _bounded_fill(
        n_leaders, low, [lo + e for lo, e in zip(low, extra, strict=True)], kept_leaders, order
    )
    # Balancing every topic's leaders can make the cluster's uneven (a topic of RF 1 pins its leaders
    # to its replicas). The cluster comes first: phase 5 then aims at targets bounded only by what
    # must hold - a broker leads its RF-1 partitions, and no more partitions than it holds.
    pinned = [0] * n
    held = [0] * n
    for t in topics:
        for b, c in replicas[t].items():
            held[b] += c
            if stats[t].replicas == stats[t].partitions:
                pinned[b] += c
    relaxed, relaxed_optional = _bounded_fill(n_leaders, pinned, held, kept_leaders, order)
    use_relaxed = max(relaxed) - min(relaxed) < max(cluster_leaders) - min(cluster_leaders)
    budget = [c - lo for c, lo in zip(cluster_leaders, low, strict=True)]
    nodes = []
    leaders: dict[str, dict[int, int]] = {}
    for t in topics:
        s = stats[t]
        fixed, group = leader_groups[t]
        counts = dict(fixed)
        if group.base:
            for b in group.members:
                counts[b] = group.base
        leaders[t] = counts
        if group.extras:
            members = frozenset(group.members)
            preferred = [b for b, c in s.leaders.items() if c > group.base and b in members]
            preferred.sort(key=lambda b: order[b])
            nodes.append(_Node(t, members, group.extras, preferred))
    chosen, violated = _assign_extras(nodes, budget, rng, leader_optional)
    cluster_leaders = _with_holders(cluster_leaders, leader_optional)
    for node, picks in zip(nodes, chosen, strict=True):
        counts = leaders[node.topic]
        for b in picks:
            counts[b] = counts.get(b, 0) + 1
    flagged |= {nodes[i].topic for i in violated}
    final, opt = (relaxed, relaxed_optional) if use_relaxed else (cluster_leaders, leader_optional)
    # any candidate may carry a +1 (the cluster stays within 1 whichever do): bounds, not exact counts
    caps = [opt.level + 1 if b in opt.candidates else c for b, c in enumerate(final)]
    floors = [opt.level if b in opt.candidates else c for b, c in enumerate(final)]
    return Targets(replicas, leaders, tuple(cluster), tuple(caps), counts_.bound, frozenset(flagged), tuple(floors))


def _rack_room(group: _Group, stats: TopicStats, layout: Layout) -> dict[int, int] | None:
    """+1s a pool of brokers spanning several racks may put in each rack: a rack holds at most
    `rack_high` replicas of the topic (one per partition when RF <= racks). None when no cap binds."""
    if layout.num_racks == 1:
        return None
    per_rack: dict[int, int] = defaultdict(int)
    for b in group.members:
        per_rack[layout.rack_of[b]] += 1
    room = {r: max(0, stats.rack_high - group.base * size) for r, size in per_rack.items()}
    if all(room[r] >= size for r, size in per_rack.items()):
        return None
    return room


def _with_holders(target: Sequence[int], optional: _Optional) -> list[int]:
    """Cluster targets after the solver moved +1s: the level for candidates, +1 for the holders."""
    result = list(target)
    for b in optional.candidates:
        result[b] = optional.level + (b in optional.holders)
    return result


# --- phase 4: realize a topic --------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TopicOutcome:
    """A topic's plan: (partition id, replica broker indices, leader first) in input order, and whether
    its per-broker counts met the targets."""

    topic: str
    partitions: list[tuple[int, list[int]]]
    exact: bool
    original_leaders: list[int] = dataclasses.field(default_factory=list)  # kept leader (or HOLE), per partition


def topic_rng(seed: int, topic: str) -> random.Random:
    """Per-topic randomness that does not depend on which topics run where or in what order."""
    return random.Random(f"{seed}/{topic}")


def realize_topic(
    topic: str,
    parts: Sequence[tuple[int, list[int], int]],
    replica_targets: Mapping[int, int],
    leader_targets: Mapping[int, int],
    layout: Layout,
    seed: int = 0,
) -> TopicOutcome:
    """Phase 4 for one topic. `parts` are (partition id, slots, kept leader) from `normalize_partition`,
    in any order (they are sorted by partition id first, so every engine computes the same plan)."""
    parts = sorted(parts, key=lambda part: part[0])
    rng = topic_rng(seed, topic)
    slots = [list(s) for _, s, _ in parts]
    exact = _realize_replicas(slots, replica_targets, layout, rng)
    original = [lead for _, _, lead in parts]
    leaders, leaders_exact = _assign_leaders(slots, original, leader_targets)
    result = []
    for (pid, _, _), replicas, lead in zip(parts, slots, leaders, strict=True):
        result.append((pid, [lead] + [b for b in replicas if b != lead]))
    # leaders per topic may miss their exact targets where the topic is sparse; phase 5 balances the
    # cluster, so `exact` is about replicas (moves and balance) only
    del leaders_exact
    return TopicOutcome(topic, result, exact, list(original))


class _Pool:
    """Units a broker still has to receive, handed out most-remaining first (ties in a seeded order)."""

    def __init__(self, units: Mapping[int, int], order: Sequence[int]) -> None:
        self.remaining = dict(units)
        self.levels: dict[int, dict[int, None]] = defaultdict(dict)
        for b in order:
            if self.remaining[b] > 0:
                self.levels[self.remaining[b]][b] = None
        self.top = max(self.levels, default=0)

    def total(self) -> int:
        return sum(self.remaining.values())

    def brokers(self) -> Iterator[int]:
        """Brokers with units left, most first."""
        for level in range(self.top, 0, -1):
            yield from list(self.levels.get(level, ()))

    def add(self, b: int, delta: int) -> None:
        r = self.remaining.get(b, 0)
        if r > 0:
            del self.levels[r][b]
        r += delta
        self.remaining[b] = r
        if r > 0:
            self.levels[r][b] = None
            self.top = max(self.top, r)
        while self.top > 0 and not self.levels.get(self.top):
            self.top -= 1


def _realize_replicas(slots: list[list[int]], targets: Mapping[int, int], layout: Layout, rng: random.Random) -> bool:
    """Fill the holes and move replicas off brokers above their count onto brokers below it, in place.

    A replacement takes the slot of the replica it replaces, so a follower's move leaves the leader
    where it was; a broker sheds follower replicas before its leaderships. Where greedy choice gets
    stuck, an augmenting path re-routes earlier placements (no extra move); only then does a
    two-partition exchange spend an extra move. Returns whether every broker met its target.
    """
    rack_of, k = layout.rack_of, layout.num_racks
    count: dict[int, int] = defaultdict(int)
    holes: list[tuple[int, int]] = []
    for pi, row in enumerate(slots):
        for pos, b in enumerate(row):
            if b < 0:
                holes.append((pi, pos))
            else:
                count[b] += 1
    over = {b: c - targets.get(b, 0) for b, c in count.items() if c > targets.get(b, 0)}
    under = {b: t - count.get(b, 0) for b, t in targets.items() if t > count.get(b, 0)}
    if not holes and not over:
        return not under
    # only brokers that shed need their partitions: in a seeded random order, followers before
    # leaders (shedding a follower keeps the broker's leaderships)
    holders: dict[int, list[int]] = {x: [] for x in over}
    if over:
        leading: dict[int, list[int]] = {x: [] for x in over}
        shuffled = list(range(len(slots)))
        rng.shuffle(shuffled)
        for pi in shuffled:
            row = slots[pi]
            for pos, b in enumerate(row):
                if b in holders:
                    (leading if pos == 0 else holders)[b].append(pi)
        for x, led_ in leading.items():
            holders[x].extend(led_)
    order = sorted(under)
    rng.shuffle(order)
    pool = _Pool(under, order)
    placements: list[list[int]] = []  # [partition, slot, receiver]
    by_receiver: dict[int, list[int]] = defaultdict(list)

    def place(pi: int, pos: int, b: int) -> None:
        slots[pi][pos] = b
        pool.add(b, -1)
        by_receiver[b].append(len(placements))
        placements.append([pi, pos, b])

    def fits(pi: int, pos: int, b: int) -> bool:
        return _fits(slots[pi], pos, b, rack_of, k)

    def reroute(pid: int, b: int) -> None:
        """Placement pid now receives b instead of its current receiver (who gets a unit back)."""
        pi, pos, old = placements[pid]
        by_receiver[old].remove(pid)
        pool.add(old, +1)
        slots[pi][pos] = b
        placements[pid][2] = b
        by_receiver[b].append(pid)
        pool.add(b, -1)

    # holes first: they must be filled whatever happens
    rng.shuffle(holes)
    stuck_holes = []
    for pi, pos in holes:
        b = next((b for b in pool.brokers() if fits(pi, pos, b)), HOLE)
        if b >= 0:
            place(pi, pos, b)
        elif not _augment_hole(pi, pos, pool, placements, by_receiver, fits, place, reroute):
            stuck_holes.append((pi, pos))

    # then sheds: the receiver with the most units left takes a replica from a broker above its count
    cursor = dict.fromkeys(holders, 0)
    over_order = sorted(over)
    rng.shuffle(over_order)
    stuck: list[int] = []
    turn = 0

    def fresh(b: int, window: bool) -> tuple[int, int, int] | None:
        """A replica of a broker above its count that b may replace: (partition, slot, broker)."""
        nonlocal turn
        for same_rack_only in (True, False) if k > 1 else (False,):
            for step in range(len(over_order)):
                x = over_order[(turn + step) % len(over_order)]
                if over[x] <= 0 or (same_rack_only and rack_of[x] != rack_of[b]):
                    continue
                found = _shed_candidate(x, b, slots, holders[x], cursor, rack_of, k, window)
                if found is not None:
                    turn = (turn + step + 1) % len(over_order)
                    return found[0], found[1], x
        return None

    def shed(found: tuple[int, int, int], b: int) -> None:
        pi, pos, x = found
        over[x] -= 1
        place(pi, pos, b)

    while over_order and pool.top > 0:
        b = next(pool.brokers())
        found = fresh(b, window=True) or fresh(b, window=False)
        if found is not None:
            shed(found, b)
        else:  # set b aside until every other receiver is placed, then augment
            stuck.append(b)
            stuck.extend([b] * (pool.remaining[b] - 1))
            pool.add(b, -pool.remaining[b])
    for b in stuck:
        pool.add(b, +1)
    exact = True
    for b in stuck:
        if pool.remaining.get(b, 0) <= 0:
            continue
        if _augment_receiver(b, placements, by_receiver, fits, reroute, lambda r: fresh(r, window=False), shed):
            continue
        # the counts can still be met, at the cost of a second move
        x = next((x for x in over_order if over[x] > 0 and _exchange_into(x, b, slots, holders, rack_of, k)), HOLE)
        if x >= 0:
            over[x] -= 1
            pool.add(b, -1)
        else:
            exact = False

    # holes nobody could fill: an exchange with another partition, else any broker that fits
    for pi, pos in stuck_holes:
        row = slots[pi]
        filled = False
        for b in list(pool.brokers()):
            if _exchange_hole(pi, pos, b, slots, rack_of, k):
                pool.add(b, -1)
                filled = True
                break
        if not filled:
            exact = False
            now = _slot_counts(slots)
            candidates = [b for b in range(len(layout.brokers)) if b not in row]
            fitting = [b for b in candidates if _fits(row, pos, b, rack_of, k)] or candidates
            row[pos] = min(fitting, key=lambda b: (now[b] - targets.get(b, 0), b))
    if exact and pool.total() == 0 and all(v <= 0 for v in over.values()):
        return True
    # a fallback above may still have landed every count on its target: exact is about the counts
    final = _slot_counts(slots)
    return all(final[b] == targets.get(b, 0) for b in set(final) | set(targets))


def _slot_counts(slots: list[list[int]]) -> defaultdict[int, int]:
    """Replicas per broker index over a topic's slots (holes left out)."""
    counts: defaultdict[int, int] = defaultdict(int)
    for row in slots:
        for b in row:
            if b >= 0:
                counts[b] += 1
    return counts


_SEARCH_LIMIT = 20000
"""Bound on the work of one augmenting-path search (checks of a broker against a slot)."""


def _augment_hole(
    pi: int,
    pos: int,
    pool: _Pool,
    placements: list[list[int]],
    by_receiver: dict[int, list[int]],
    fits: Callable[[int, int, int], bool],
    place: Callable[[int, int, int], None],
    reroute: Callable[[int, int], None],
) -> bool:
    """Hole (pi, pos) fits only receivers with no units left: find a chain of earlier placements that
    moves over to other receivers, ending at one with a unit left (breadth-first over brokers)."""
    brokers = list(pool.remaining)
    parent: dict[int, tuple[int, int]] = {}  # receiver -> (placement that would take it, previous receiver)
    queue: deque[int] = deque()
    work = 0
    for b in brokers:
        if fits(pi, pos, b):
            parent[b] = (HOLE, HOLE)
            queue.append(b)
    end = HOLE
    while queue and end < 0 and work < _SEARCH_LIMIT:
        r = queue.popleft()
        if pool.remaining.get(r, 0) > 0:
            end = r
            break
        for pid in by_receiver[r]:
            qi, qpos, _ = placements[pid]
            for r2 in brokers:
                work += 1
                if r2 not in parent and fits(qi, qpos, r2):
                    parent[r2] = (pid, r)
                    queue.append(r2)
    if end < 0:
        return False
    chain = []
    r = end
    while True:
        pid, prev = parent[r]
        chain.append((pid, r))
        if prev < 0:
            break
        r = prev
    # the last placement in the chain takes `end` first, so every receiver always fits its slot
    for pid, r in chain[:-1]:
        reroute(pid, r)
    place(pi, pos, chain[-1][1])
    return True


def _augment_receiver(
    b: int,
    placements: list[list[int]],
    by_receiver: dict[int, list[int]],
    fits: Callable[[int, int, int], bool],
    reroute: Callable[[int, int], None],
    fresh: Callable[[int], tuple[int, int, int] | None],
    shed: Callable[[tuple[int, int, int], int], None],
) -> bool:
    """Receiver b fits no replica that may move: let b take an earlier placement's slot, whose
    receiver takes another's, ..., until one receiver takes a fresh replica that may move."""
    parent: dict[int, tuple[int, int]] = {b: (HOLE, HOLE)}
    queue: deque[int] = deque([b])
    work = 0
    while queue and work < _SEARCH_LIMIT:
        r = queue.popleft()
        found = fresh(r) if r != b else None
        if found is not None:
            chain = []
            x = r
            while x != b:
                pid, prev = parent[x]
                chain.append((pid, prev))
                x = prev
            # r takes the fresh slot, then each placement passes to the receiver that wanted it
            shed(found, r)
            for pid, prev in chain:
                reroute(pid, prev)
            return True
        for holder, pids in list(by_receiver.items()):
            if holder in parent:
                continue
            for pid in pids:
                work += 1
                qi, qpos, _ = placements[pid]
                if fits(qi, qpos, r):
                    parent[holder] = (pid, r)
                    queue.append(holder)
                    break
    return False


def _shed_candidate(
    x: int,
    b: int,
    slots: list[list[int]],
    cands: list[int],
    cursor: dict[int, int],
    rack_of: Sequence[int],
    k: int,
    window: bool,
) -> tuple[int, int] | None:
    """A partition of broker x where b may take x's slot: (partition, slot), advancing x's cursor."""
    start = cursor[x]
    stop = min(len(cands), start + _WINDOW) if window else len(cands)
    for j in range(start, stop):
        pi = cands[j]
        row = slots[pi]
        if x not in row:
            continue
        pos = row.index(x)
        if _fits(row, pos, b, rack_of, k):
            cands[j], cands[start] = cands[start], cands[j]
            cursor[x] = start + 1
            return pi, pos
    return None


def _exchange_into(
    x: int, b: int, slots: list[list[int]], holders: dict[int, list[int]], rack_of: Sequence[int], k: int
) -> bool:
    """Broker b must gain a replica and x lose one, but no partition of x takes b directly: find a
    partition p of x and a partition q without b, and a broker y, so that p: x -> y and q: y -> b."""
    budget = 4000
    for p in holders[x]:
        row_p = slots[p]
        if x not in row_p:
            continue
        pos_x = row_p.index(x)
        for q, row_q in enumerate(slots):
            if q == p or b in row_q:
                continue
            for pos_y, y in enumerate(row_q):
                budget -= 1
                if budget < 0:
                    return False
                if y < 0 or y == x or y in row_p:
                    continue
                if _fits(row_p, pos_x, y, rack_of, k) and _fits(row_q, pos_y, b, rack_of, k):
                    row_p[pos_x] = y
                    row_q[pos_y] = b
                    if y in holders:  # y left q and joined p: its count is unchanged
                        holders[y].append(p)
                    return True
    return False


def _exchange_hole(pi: int, pos: int, b: int, slots: list[list[int]], rack_of: Sequence[int], k: int) -> bool:
    """Fill hole (pi, pos) with a broker y taken from a partition q that then takes receiver b."""
    row_p = slots[pi]
    budget = 4000
    for q, row_q in enumerate(slots):
        if q == pi or b in row_q:
            continue
        for pos_y, y in enumerate(row_q):
            budget -= 1
            if budget < 0:
                return False
            if y < 0 or y in row_p:
                continue
            if _fits(row_p, pos, y, rack_of, k) and _fits(row_q, pos_y, b, rack_of, k):
                row_p[pos] = y
                row_q[pos_y] = b
                return True
    return False


def _assign_leaders(
    sets: Sequence[Sequence[int]],
    original: Sequence[int],
    targets: Mapping[int, int],
    floors: Mapping[int, int] | None = None,
) -> tuple[list[int], bool]:
    """A leader per partition among its replicas, broker b leading at most targets[b] and at least
    floors[b] (default: exactly targets[b]) partitions, keeping the original leader wherever the
    counts allow (fewest leader changes).

    A capacitated bipartite matching: keep originals, shed brokers above their cap onto replicas
    with room, augmenting paths (breadth-first over brokers) for the rest, then paths that raise
    brokers below their floor. Where no such matching exists the leftovers go to the replica with
    the most room. Returns (leader per partition, whether every count is within its bounds).
    """
    floors = targets if floors is None else floors
    room = defaultdict(int, targets)
    lead = [HOLE] * len(sets)
    led: dict[int, dict[int, None]] = defaultdict(dict)
    for p, o in enumerate(original):
        if o >= 0 and o in sets[p]:
            lead[p] = o
            led[o][p] = None
            room[o] -= 1

    def move(p: int, to: int) -> None:
        old = lead[p]
        if old >= 0:
            del led[old][p]
            room[old] += 1
        lead[p] = to
        led[to][p] = None
        room[to] -= 1

    # brokers above their count hand partitions to a replica with room
    for o in sorted(b for b in led if room[b] < 0):
        for p in list(led[o]):
            if room[o] >= 0:
                break
            best = max((b for b in sets[p] if b != o), key=lambda b: room[b], default=HOLE)
            if best >= 0 and room[best] > 0:
                move(p, best)
    for p in range(len(sets)):
        if lead[p] < 0:
            best = max(sets[p], key=lambda b: room[b])
            if room[best] > 0:
                move(p, best)

    def run(starts: list[int]) -> bool:
        """An augmenting path: a start partition -> a replica broker -> a partition it leads -> ...
        -> a broker with room (breadth-first); shift every leader on it one step."""
        parent: dict[int, tuple[int, int]] = {}
        queue: deque[int] = deque()
        end = HOLE
        for p in starts:
            for b in sets[p]:
                if b != lead[p] and b not in parent:
                    parent[b] = (p, HOLE)
                    if room[b] > 0:
                        end = b
                        break
                    queue.append(b)
            if end >= 0:
                break
        while end < 0 and queue:
            b = queue.popleft()
            for q in led[b]:
                for c in sets[q]:
                    if c != b and c not in parent:
                        parent[c] = (q, b)
                        if room[c] > 0:
                            end = c
                            break
                        queue.append(c)
                if end >= 0:
                    break
        if end < 0:
            return False
        chain = []
        while end >= 0:
            p, prev = parent[end]
            chain.append((p, end))
            end = prev
        for p, b in chain:
            move(p, b)
        return True

    exact = True
    for p in range(len(sets)):
        if lead[p] < 0 and not run([p]):
            best = max(sets[p], key=lambda b: room[b])
            move(p, best)
            exact = False
    for o in sorted(b for b in list(led) if room[b] < 0):
        while room[o] < 0:
            if not run(list(led[o])):
                exact = False
                break

    # brokers below their floor take a leadership from a replica set they share with a broker above
    # its floor, possibly through a chain of brokers exactly at their floor
    contains: dict[int, list[int]] = defaultdict(list)
    for p, replicas in enumerate(sets):
        for b in replicas:
            contains[b].append(p)

    def count(b: int) -> int:
        return len(led[b]) if b in led else 0

    def raise_(u: int) -> bool:
        parent: dict[int, tuple[int, int]] = {u: (HOLE, HOLE)}
        queue: deque[int] = deque([u])
        while queue:
            x = queue.popleft()
            for p in contains[x]:
                v = lead[p]
                if v == x or v in parent:
                    continue
                parent[v] = (p, x)
                if count(v) > floors.get(v, 0):
                    while v != u:  # v gives p to x, x gives its partition on to the broker before it...
                        p, x = parent[v]
                        move(p, x)
                        v = x
                    return True
                queue.append(v)
        return False

    for u in sorted(b for b in floors if count(b) < floors[b]):
        while count(u) < floors[u]:
            if not raise_(u):
                exact = False
                break
    if any(count(b) > targets.get(b, 0) or count(b) < floors.get(b, 0) for b in set(targets) | set(led)):
        exact = False
    return lead, exact


# --- phase 5: cluster-wide leader repair ---------------------------------------------------------


def needs_leader_repair(
    replicas: Sequence[int], leader_counts: Sequence[int], targets: Sequence[int], floors: Sequence[int]
) -> bool:
    """Whether a partition (replicas as broker indices, leader first) takes part in the cluster-wide
    leader repair: its leader leads more than its floor (it may give one up), or one of its replicas
    leads fewer than its target (it may take one).

    Data-defined, so the local and the Spark engine pick the same partitions.
    """
    lead = replicas[0]
    if leader_counts[lead] > floors[lead]:
        return True
    return any(leader_counts[b] < targets[b] for b in replicas)


def leaders_balanced(leader_counts: Sequence[int], targets: Targets) -> bool:
    """Every broker within its cluster leader bounds: phase 5 has nothing to do."""
    return all(
        lo <= c <= hi for c, lo, hi in zip(leader_counts, targets.leader_floors, targets.broker_leaders, strict=True)
    )


def fix_leaders(
    rows: Sequence[tuple[str, int, list[int], int]],
    leader_counts: Sequence[int],
    targets: Sequence[int],
    floors: Sequence[int] | None = None,
) -> list[tuple[str, int, list[int]]]:
    """Rebalance leaders across the cluster by reordering the replica lists of `rows`.

    `rows` are (topic, partition, replicas with the leader first, original leader or HOLE) that
    `needs_leader_repair` picked; `leader_counts` are the cluster's leader counts with every
    partition as planned. A broker may lead, within `rows`, its target (at most) and its floor (at
    least, default the target) minus what it leads elsewhere; original leaders are kept where that
    allows. Moves no replica.
    """
    floors = targets if floors is None else floors
    if not rows:
        return []
    sets = [replicas for _, _, replicas, _ in rows]
    here = [0] * len(leader_counts)
    for replicas in sets:
        here[replicas[0]] += 1
    room = {b: max(0, targets[b] - (leader_counts[b] - here[b])) for b in range(len(leader_counts))}
    if sum(room.values()) < len(sets):  # brokers above target on other partitions: share the excess
        deficit = len(sets) - sum(room.values())
        for b in sorted(room, key=lambda b: (leader_counts[b] - targets[b], b))[:deficit]:
            room[b] += 1
    low = {b: max(0, floors[b] - (leader_counts[b] - here[b])) for b in range(len(leader_counts))}
    preferred = [o if o in replicas else replicas[0] for (_, _, replicas, o) in rows]
    leaders, _ = _assign_leaders(sets, preferred, room, low)
    return [
        (topic, pid, [lead] + [b for b in replicas if b != lead])
        for (topic, pid, replicas, _), lead in zip(rows, leaders, strict=True)
    ]


# --- the local engine ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Plan:
    """A proposed assignment (only the partitions given, every one of them) and the lower bound."""

    proposed: dict[Key, list[int]]
    bound: LowerBound
    inexact_topics: tuple[str, ...] = ()


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
    rows = [
        (o.topic, pid, replicas, lead)
        for o in outcomes
        for (pid, replicas), lead in zip(o.partitions, o.original_leaders, strict=True)
        if needs_leader_repair(replicas, counts, goal, floors)
    ]
    fixed = {(t, pid): replicas for t, pid, replicas in fix_leaders(rows, counts, goal, floors)}
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
            (b for b in range(n) if _fits(row, pos, b, rack_of, k)),
            key=lambda b: (load[b], tiebreak[b]),
            default=HOLE,
        )
        if best < 0:  # no broker fits the rack rule: any broker not in the partition
            best = min((b for b in range(n) if b not in row), key=lambda b: (load[b], tiebreak[b]))
        row[pos] = best
        load[best] += size[i]
    # leaders by count, cluster-wide
    held = [0] * n
    for row in rows:
        for b in row:
            held[b] += 1
    fixed, group = _cap_fill(len(rows), dict(enumerate(held)))
    room = dict(fixed)
    leading = [0] * n
    for o in originals:
        if o >= 0:
            leading[o] += 1
    plus = _top(group.members, group.extras, leading, tiebreak)
    for b in group.members:
        room[b] = group.base + (b in plus)
    leaders, _ = _assign_leaders(rows, originals, room)
    brokers = layout.brokers
    proposed = {
        key: [brokers[lead]] + [brokers[b] for b in row if b != lead]
        for key, row, lead in zip(keys, rows, leaders, strict=True)
    }
    return Plan(proposed, LowerBound(forced, 0, 0))


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


# --- the plan report -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Spread:
    """min / max / mean / population stddev of a per-broker figure; `spread` = max - min."""

    min: float
    max: float
    mean: float
    stddev: float

    @property
    def spread(self) -> float:
        return self.max - self.min

    @staticmethod
    def of(values: Sequence[float]) -> Spread:
        if not values:
            return Spread(0, 0, 0.0, 0.0)
        mean = sum(values) / len(values)
        return Spread(min(values), max(values), mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)))


@dataclasses.dataclass
class TopicFigures:
    """One topic's share of the report (Spark computes these next to the plan and merges them)."""

    topic: str
    partitions: int = 0
    replicas: int = 0
    moved: int = 0
    bytes_moved: int = 0
    leader_changes: int = 0
    changed: int = 0
    racks_before: int = 0
    racks_after: int = 0
    spread_before: int = 0
    spread_after: int = 0
    replicas_before: dict[int, int] = dataclasses.field(default_factory=dict)
    replicas_after: dict[int, int] = dataclasses.field(default_factory=dict)
    leaders_before: dict[int, int] = dataclasses.field(default_factory=dict)
    leaders_after: dict[int, int] = dataclasses.field(default_factory=dict)
    bytes_before: dict[int, int] = dataclasses.field(default_factory=dict)
    bytes_after: dict[int, int] = dataclasses.field(default_factory=dict)


def topic_figures(
    topic: str,
    rows: Iterable[tuple[Sequence[int], Sequence[int], int]],
    targets: Sequence[int],
    racks: Mapping[int, str],
    num_racks_before: int,
    num_racks_after: int,
) -> TopicFigures:
    """Figures of one topic from (current replicas, proposed replicas, size in bytes) rows, broker ids.

    The topic's spread is max - min of its replicas per broker: after over the target brokers, before
    over the target brokers and the brokers that held it.
    """
    f = TopicFigures(topic)
    rb, ra, lb, la, bb, ba = (
        f.replicas_before,
        f.replicas_after,
        f.leaders_before,
        f.leaders_after,
        f.bytes_before,
        f.bytes_after,
    )
    for old, new, size in rows:
        f.partitions += 1
        f.replicas += len(new)
        for b in old:
            rb[b] = rb.get(b, 0) + 1
            bb[b] = bb.get(b, 0) + size
        for b in new:
            ra[b] = ra.get(b, 0) + 1
            ba[b] = ba.get(b, 0) + size
        if old:
            lb[old[0]] = lb.get(old[0], 0) + 1
        la[new[0]] = la.get(new[0], 0) + 1
        added = len(set(new) - set(old))
        f.moved += added
        f.bytes_moved += added * size
        f.leader_changes += bool(old) and old[0] != new[0]
        f.changed += list(old) != list(new)
        if racks:
            f.racks_before += rack_span_violation(old, racks, num_racks_before)
            f.racks_after += rack_span_violation(new, racks, num_racks_after)
    target_set = set(targets)
    after = [ra.get(b, 0) for b in targets] + [c for b, c in ra.items() if b not in target_set]
    before = [rb.get(b, 0) for b in targets] + [c for b, c in rb.items() if b not in target_set]
    f.spread_after = max(after) - min(after) if after else 0
    f.spread_before = max(before) - min(before) if before else 0
    return f


@dataclasses.dataclass(frozen=True)
class BrokerFigures:
    broker: int
    rack: str | None
    target: bool
    replicas_before: int
    replicas_after: int
    leaders_before: int
    leaders_after: int
    bytes_before: int
    bytes_after: int


@dataclasses.dataclass(frozen=True)
class PlanReport:
    """The figures topicmappr and Cruise Control print, for one plan."""

    partitions: int
    replicas: int
    replicas_moved: int
    lower_bound: LowerBound
    leader_changes: int
    partitions_changed: int
    brokers: tuple[BrokerFigures, ...]
    replicas_before: Spread
    replicas_after: Spread
    leaders_before: Spread
    leaders_after: Spread
    topics: int
    topic_spread_before: int  # worst topic
    topic_spread_after: int
    topics_within_one_before: int
    topics_within_one_after: int
    rack_violations_before: int
    rack_violations_after: int
    bytes_moved: int | None = None
    bytes_before: Spread | None = None
    bytes_after: Spread | None = None
    topic_spreads: dict[str, tuple[int, int]] = dataclasses.field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready document (`--stats-json`, `--output json`)."""

        def spread(s: Spread | None) -> dict[str, float] | None:
            if s is None:
                return None
            return {
                "min": s.min,
                "max": s.max,
                "mean": round(s.mean, 3),
                "stddev": round(s.stddev, 3),
                "spread": s.spread,
            }

        return {
            "partitions": self.partitions,
            "replicas": self.replicas,
            "replicas_moved": self.replicas_moved,
            "lower_bound": self.lower_bound.total,
            "lower_bound_parts": dataclasses.asdict(self.lower_bound),
            "leader_changes": self.leader_changes,
            "partitions_changed": self.partitions_changed,
            "replicas_per_broker": {"before": spread(self.replicas_before), "after": spread(self.replicas_after)},
            "leaders_per_broker": {"before": spread(self.leaders_before), "after": spread(self.leaders_after)},
            "bytes_per_broker": {"before": spread(self.bytes_before), "after": spread(self.bytes_after)},
            "bytes_moved": self.bytes_moved,
            "topics": self.topics,
            "topic_spread": {"before": self.topic_spread_before, "after": self.topic_spread_after},
            "topics_within_one": {"before": self.topics_within_one_before, "after": self.topics_within_one_after},
            "rack_violations": {"before": self.rack_violations_before, "after": self.rack_violations_after},
            "brokers": [dataclasses.asdict(b) for b in self.brokers],
            "topic_spreads": {t: {"before": b, "after": a} for t, (b, a) in sorted(self.topic_spreads.items())},
        }


class ReportBuilder:
    """Accumulates `TopicFigures` (in any order, from any number of workers) into a `PlanReport`."""

    def __init__(self) -> None:
        self.totals = dict.fromkeys(
            (
                "partitions",
                "replicas",
                "moved",
                "bytes_moved",
                "leader_changes",
                "changed",
                "racks_before",
                "racks_after",
            ),
            0,
        )
        self.per_broker: dict[str, dict[int, int]] = {
            name: defaultdict(int)
            for name in (
                "replicas_before",
                "replicas_after",
                "leaders_before",
                "leaders_after",
                "bytes_before",
                "bytes_after",
            )
        }
        self.spreads: dict[str, tuple[int, int]] = {}

    def add(self, f: TopicFigures) -> ReportBuilder:
        self.totals["partitions"] += f.partitions
        self.totals["replicas"] += f.replicas
        self.totals["moved"] += f.moved
        self.totals["bytes_moved"] += f.bytes_moved
        self.totals["leader_changes"] += f.leader_changes
        self.totals["changed"] += f.changed
        self.totals["racks_before"] += f.racks_before
        self.totals["racks_after"] += f.racks_after
        for name, counts in self.per_broker.items():
            for b, c in getattr(f, name).items():
                counts[b] += c
        self.spreads[f.topic] = (f.spread_before, f.spread_after)
        return self

    def merge(self, other: ReportBuilder) -> ReportBuilder:
        for key, value in other.totals.items():
            self.totals[key] += value
        for name, counts in other.per_broker.items():
            for b, c in counts.items():
                self.per_broker[name][b] += c
        self.spreads.update(other.spreads)
        return self

    def finish(
        self, targets: Sequence[int], racks: Mapping[int, str], bound: LowerBound, with_bytes: bool
    ) -> PlanReport:
        pb = self.per_broker
        target_set = set(targets)
        before_set = target_set | {b for b, c in pb["replicas_before"].items() if c}
        brokers = tuple(
            BrokerFigures(
                b,
                racks.get(b),
                b in target_set,
                pb["replicas_before"].get(b, 0),
                pb["replicas_after"].get(b, 0),
                pb["leaders_before"].get(b, 0),
                pb["leaders_after"].get(b, 0),
                pb["bytes_before"].get(b, 0),
                pb["bytes_after"].get(b, 0),
            )
            for b in sorted(before_set | {b for b, c in pb["replicas_after"].items() if c})
        )
        before = [x for x in brokers if x.broker in before_set]
        after = [x for x in brokers if x.target or x.replicas_after]
        spreads = self.spreads
        t = self.totals
        return PlanReport(
            partitions=t["partitions"],
            replicas=t["replicas"],
            replicas_moved=t["moved"],
            lower_bound=bound,
            leader_changes=t["leader_changes"],
            partitions_changed=t["changed"],
            brokers=brokers,
            replicas_before=Spread.of([x.replicas_before for x in before]),
            replicas_after=Spread.of([x.replicas_after for x in after]),
            leaders_before=Spread.of([x.leaders_before for x in before]),
            leaders_after=Spread.of([x.leaders_after for x in after]),
            topics=len(spreads),
            topic_spread_before=max((b for b, _ in spreads.values()), default=0),
            topic_spread_after=max((a for _, a in spreads.values()), default=0),
            topics_within_one_before=sum(1 for b, _ in spreads.values() if b <= 1),
            topics_within_one_after=sum(1 for _, a in spreads.values() if a <= 1),
            rack_violations_before=t["racks_before"],
            rack_violations_after=t["racks_after"],
            bytes_moved=t["bytes_moved"] if with_bytes else None,
            bytes_before=Spread.of([x.bytes_before for x in before]) if with_bytes else None,
            bytes_after=Spread.of([x.bytes_after for x in after]) if with_bytes else None,
            topic_spreads=dict(spreads),
        )


def plan_report(
    current: Mapping[Key, Sequence[int]],
    proposed: Mapping[Key, Sequence[int]],
    brokers: Iterable[int],
    racks: Mapping[int, str] | None = None,
    sizes: Mapping[Key, int] | None = None,
    all_racks: Mapping[int, str] | None = None,
    bound: LowerBound | None = None,
) -> PlanReport:
    """The report of any plan of `current` onto the target `brokers` (either strategy).

    `all_racks` gives the racks of brokers outside the target list too (for "before" figures).
    `bound` is computed when not given. Raises the errors of `make_layout`.
    """
    layout = make_layout(brokers, racks)
    if bound is None:
        bound = lower_bound(collect_stats(current, layout), layout)
    known_racks = dict(all_racks or {})
    known_racks.update(layout.racks or {})
    racks_before = len(set(known_racks.values())) if known_racks else 1
    by_topic: dict[str, list[tuple[Sequence[int], Sequence[int], int]]] = defaultdict(list)
    for key, old in current.items():
        by_topic[key[0]].append((old, proposed.get(key, old), int(sizes.get(key, 0)) if sizes else 0))
    builder = ReportBuilder()
    targets = layout.brokers
    for topic in sorted(by_topic):
        builder.add(
            topic_figures(
                topic, by_topic[topic], targets, known_racks if layout.racks else {}, racks_before, layout.num_racks
            )
        )
    report = builder.finish(targets, known_racks, bound, sizes is not None)
    if report.replicas_after.spread > 1 and sizes is None:
        # Racks of unequal size can make counts within 1 unreachable: the balance part of the bound
        # then bounds a goal no plan meets. What any rack-respecting plan must move still holds.
        report = dataclasses.replace(
            report, lower_bound=LowerBound(forced=bound.forced, cluster=0, per_topic=0, rack=bound.rack)
        )
    return report


# --- batches -------------------------------------------------------------------------------------


def split_batches(
    current: Mapping[Key, Sequence[int]], proposed: Mapping[Key, Sequence[int]], batch_size: int
) -> list[dict[Key, list[int]]]:
    """Cut the changed partitions of a plan into batches of at most `batch_size` partitions.

    Each batch carries every broker's incoming (and outgoing) replicas in proportion to its total:
    a partition's place in the order is how far along its brokers' queues it sits, so after any
    prefix of batches every broker has received about the same fraction of what it will receive —
    the cluster stays balanced between batches. Partitions whose only change is the leader order
    are spread the same way over their new leader.

    Raises InvalidArgumentError when batch_size < 1.
    """
    if batch_size < 1:
        raise InvalidArgumentError(f"The batch size must be a positive number, not {batch_size}")
    changed = sorted(k for k, new in proposed.items() if list(current.get(k, ())) != list(new))
    queues: dict[tuple[str, int], int] = defaultdict(int)
    position: dict[Key, list[tuple[tuple[str, int], int]]] = {}
    for key in changed:
        old, new = set(current.get(key, ())), proposed[key]
        ends = [("in", b) for b in new if b not in old] + [("out", b) for b in old if b not in set(new)]
        if not ends:
            ends = [("lead", new[0])]
        position[key] = [(end, queues[end]) for end in ends]
        for end in ends:
            queues[end] += 1

    def progress(key: Key) -> float:
        return max((i + 0.5) / queues[end] for end, i in position[key])

    ordered = sorted(changed, key=lambda k: (progress(k), k))
    return [{k: list(proposed[k]) for k in ordered[i : i + batch_size]} for i in range(0, len(ordered), batch_size)]


def batch_figures(
    current: Mapping[Key, Sequence[int]], batches: Sequence[Mapping[Key, Sequence[int]]], brokers: Iterable[int]
) -> list[dict[str, int | float]]:
    """Per batch: its partitions and replica moves, and the spread of replicas and leaders over the
    target brokers once it and every batch before it have run (what the operator sees in between)."""
    targets = list(brokers)
    replicas: dict[int, int] = defaultdict(int)
    leaders: dict[int, int] = defaultdict(int)
    for old in current.values():
        for b in old:
            replicas[b] += 1
        leaders[old[0]] += 1
    state = {k: list(v) for k, v in current.items()}
    figures: list[dict[str, int | float]] = []
    for batch in batches:
        moved = 0
        for key, new in batch.items():
            old = state.get(key, [])
            for b in old:
                replicas[b] -= 1
            for b in new:
                replicas[b] += 1
            if old:
                leaders[old[0]] -= 1
            leaders[new[0]] += 1
            moved += len(set(new) - set(old))
            state[key] = list(new)
        r = [replicas[b] for b in targets]
        lead = [leaders[b] for b in targets]
        figures.append(
            {
                "partitions": len(batch),
                "replicas_moved": moved,
                "replica_spread_after": max(r) - min(r),
                "leader_spread_after": max(lead) - min(lead),
            }
        )
    return figures


def iter_rows(current: Mapping[Key, Sequence[int]]) -> Iterator[tuple[str, int, list[int]]]:
    """(topic, partition, replicas) rows in sorted order: the shape the Spark job reads."""
    for topic, pid in sorted(current):
        yield topic, pid, list(current[(topic, pid)])

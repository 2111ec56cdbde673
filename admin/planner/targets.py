"""Phase 3: the exact count of replicas (and leaders) every broker should hold of every topic, and the
lower bound on moves the report prints beside a plan.

Per topic the counts are floor/ceil of the fair share (water-filled over racks when racks cap a
share, with a cap per rack where a small topic's partitions could not host more); the cluster's
totals are as even as those per-topic bounds allow. Which brokers get a topic's "+1"s is the
bipartite assignment of `extras`. Runs on one machine even for the Spark engine: its input is one
small record per (topic, broker).
"""

from __future__ import annotations

import dataclasses
import heapq
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence

from kafkaops.admin.planner.extras import ClusterExtras, ExtrasNode, assign_extras
from kafkaops.admin.planner.layout import Layout
from kafkaops.admin.planner.stats import TopicStats


@dataclasses.dataclass(frozen=True)
class ShareGroup:
    """Brokers that share one fair share of a topic: each holds `base`, `extras` of them one more."""

    members: tuple[int, ...]
    base: int
    extras: int


def _rack_members(layout: Layout) -> list[tuple[int, ...]]:
    members: list[list[int]] = [[] for _ in range(layout.num_racks)]
    for b, r in enumerate(layout.rack_of):
        members[r].append(b)
    return [tuple(m) for m in members]


def _water_fill(total: int, racks: Sequence[tuple[int, ...]], low: int, high: int) -> list[ShareGroup]:
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
        return [ShareGroup(everyone, *divmod(total, len(everyone)))]
    groups = [ShareGroup(racks[r], *divmod(fixed[r], len(racks[r]))) for r in sorted(fixed)]
    if free:
        pool = racks[free[0]] if len(free) == 1 else tuple(sorted(b for r in free for b in racks[r]))
        groups.append(ShareGroup(pool, *divmod(remaining, len(pool))))
    return groups


def cap_fill(total: int, caps: Mapping[int, int]) -> tuple[dict[int, int], ShareGroup]:
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
        return fixed, ShareGroup((), 0, 0)
    return fixed, ShareGroup(free, *divmod(remaining, len(free)))


def top_brokers(
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


def _bounded_fill(
    total: int,
    low: Sequence[int],
    high: Sequence[int],
    weight: Sequence[int],
    order: Sequence[int],
    reserve: Sequence[tuple[Sequence[int], int]] = (),
) -> tuple[list[int], ClusterExtras]:
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
            chosen = top_brokers(sorted(x for x in members if x in candidates), min(deficit, rest), weight, order)
            holders |= chosen
            rest -= len(chosen)
    holders |= top_brokers(sorted(candidates - holders), rest, weight, order)
    for x in holders:
        target[x] += 1
    return target, ClusterExtras(set(holders), candidates, a)


@dataclasses.dataclass(frozen=True)
class _ReplicaCounts:
    """Per-topic groups, cluster targets and the lower bound: shared by the solver and the report."""

    groups: dict[str, list[ShareGroup]]
    cluster: list[int]
    optional: ClusterExtras
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
    groups: dict[str, list[ShareGroup]] = {}
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


def solve_targets(stats: Mapping[str, TopicStats], layout: Layout, seed: int = 0) -> Targets:
    """Exact replica and leader counts per topic and broker (phase 3, see the module docstring).

    Runs on one machine even for the Spark engine: its input is one small record per (topic, broker).
    """
    rng = random.Random(seed)
    order = list(range(len(layout.brokers)))
    rng.shuffle(order)
    counts = _replica_counts(stats, layout, order)
    replicas, cluster, flagged = _replica_targets(stats, layout, counts, order, rng)
    leaders, caps, floors, leaders_flagged = _leader_targets(stats, replicas, order, rng)
    flagged |= leaders_flagged
    return Targets(replicas, leaders, tuple(cluster), tuple(caps), counts.bound, frozenset(flagged), tuple(floors))


def _replica_targets(
    stats: Mapping[str, TopicStats], layout: Layout, counts_: _ReplicaCounts, order: Sequence[int], rng: random.Random
) -> tuple[dict[str, dict[int, int]], list[int], set[str]]:
    """Replicas: every topic's groups give each broker its floor, then `assign_extras` says where each
    topic's +1s go. Returns (per-topic targets, cluster targets, topics whose +1s broke a budget)."""
    n = len(layout.brokers)
    budget = list(counts_.cluster)
    nodes: list[ExtrasNode] = []
    everyone = frozenset(range(n))
    replicas: dict[str, dict[int, int]] = {}
    for t in sorted(stats):
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
                nodes.append(ExtrasNode(t, None if members is everyone else members, g.extras, preferred, room))
        replicas[t] = counts
    chosen, violated = assign_extras(nodes, budget, rng, counts_.optional, layout.rack_of)
    cluster = _with_holders(counts_.cluster, counts_.optional)
    for node, picks in zip(nodes, chosen, strict=True):
        counts = replicas[node.topic]
        for b in picks:
            counts[b] = counts.get(b, 0) + 1
    return replicas, cluster, {nodes[i].topic for i in violated}


def _leader_targets(
    stats: Mapping[str, TopicStats], replicas: Mapping[str, Mapping[int, int]], order: Sequence[int], rng: random.Random
) -> tuple[dict[str, dict[int, int]], list[int], list[int], set[str]]:
    """Leaders: per topic at most the replicas a broker holds (water-filled), cluster-wide as even as
    those per-topic bounds allow, the +1s to brokers keeping most leaders. Returns (per-topic targets,
    the most and the fewest leaders of each broker cluster-wide, topics whose +1s broke a budget)."""
    n = len(order)
    topics = sorted(stats)
    kept_leaders = [0] * n
    low = [0] * n
    extra = [0] * n
    leader_groups: dict[str, tuple[dict[int, int], ShareGroup]] = {}
    for t in topics:
        s = stats[t]
        for b, c in s.leaders.items():
            kept_leaders[b] += c
        fixed, group = cap_fill(s.partitions, replicas[t])
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
            nodes.append(ExtrasNode(t, members, group.extras, preferred))
    chosen, violated = assign_extras(nodes, budget, rng, leader_optional)
    cluster_leaders = _with_holders(cluster_leaders, leader_optional)
    for node, picks in zip(nodes, chosen, strict=True):
        counts = leaders[node.topic]
        for b in picks:
            counts[b] = counts.get(b, 0) + 1
    final, opt = (relaxed, relaxed_optional) if use_relaxed else (cluster_leaders, leader_optional)
    # any candidate may carry a +1 (the cluster stays within 1 whichever do): bounds, not exact counts
    caps = [opt.level + 1 if b in opt.candidates else c for b, c in enumerate(final)]
    floors = [opt.level if b in opt.candidates else c for b, c in enumerate(final)]
    return leaders, caps, floors, {nodes[i].topic for i in violated}


def _rack_room(group: ShareGroup, stats: TopicStats, layout: Layout) -> dict[int, int] | None:
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


def _with_holders(target: Sequence[int], optional: ClusterExtras) -> list[int]:
    """Cluster targets after the solver moved +1s: the level for candidates, +1 for the holders."""
    result = list(target)
    for b in optional.candidates:
        result[b] = optional.level + (b in optional.holders)
    return result

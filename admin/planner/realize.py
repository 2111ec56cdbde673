"""Phase 4, per topic and independently: which partitions shed a replica from a broker above its count
(followers before leaders) and which hole or shed each broker below its count receives (no broker
twice in a partition, rack rule kept). Where greedy choice gets stuck, augmenting paths re-route
earlier placements (no extra move), and only then does a two-partition exchange spend one. Then the
topic's leaders (`leaders.assign_leaders`).
"""

from __future__ import annotations

import dataclasses
import random
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Mapping, Sequence

from kafkaops.admin.planner.layout import HOLE, Layout, may_take
from kafkaops.admin.planner.leaders import assign_leaders


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
    leaders, leaders_exact = assign_leaders(slots, original, leader_targets)
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
    moves = _Moves(slots, layout, over, under, rng)
    # holes first: they must be filled whatever happens
    stuck_holes = moves.fill_holes(holes, rng)
    exact = moves.move_surplus(rng)
    exact = moves.fill_stuck_holes(stuck_holes, targets, len(layout.brokers)) and exact
    if exact and moves.pool.total() == 0 and all(v <= 0 for v in over.values()):
        return True
    # a fallback above may still have landed every count on its target: exact is about the counts
    final = _slot_counts(slots)
    return all(final[b] == targets.get(b, 0) for b in set(final) | set(targets))


class _Moves:
    """A topic's slots while phase 4 fills them: the units each receiver still takes (`pool`), every
    placement made so far (so that an augmenting path can re-route it), and the replicas each broker
    above its count still sheds (`over`), with its partitions in the order it sheds them (`holders`)."""

    def __init__(
        self, slots: list[list[int]], layout: Layout, over: dict[int, int], under: dict[int, int], rng: random.Random
    ) -> None:
        self.slots = slots
        self.rack_of, self.k = layout.rack_of, layout.num_racks
        self.over = over
        # only brokers that shed need their partitions: in a seeded random order, followers before
        # leaders (shedding a follower keeps the broker's leaderships)
        self.holders: dict[int, list[int]] = {x: [] for x in over}
        if over:
            leading: dict[int, list[int]] = {x: [] for x in over}
            shuffled = list(range(len(slots)))
            rng.shuffle(shuffled)
            for pi in shuffled:
                row = slots[pi]
                for pos, b in enumerate(row):
                    if b in self.holders:
                        (leading if pos == 0 else self.holders)[b].append(pi)
            for x, led_ in leading.items():
                self.holders[x].extend(led_)
        order = sorted(under)
        rng.shuffle(order)
        self.pool = _Pool(under, order)
        self.placements: list[list[int]] = []  # [partition, slot, receiver]
        self.by_receiver: dict[int, list[int]] = defaultdict(list)
        self.cursor: dict[int, int] = {}
        self.over_order: list[int] = []
        self.turn = 0

    def place(self, pi: int, pos: int, b: int) -> None:
        self.slots[pi][pos] = b
        self.pool.add(b, -1)
        self.by_receiver[b].append(len(self.placements))
        self.placements.append([pi, pos, b])

    def fits(self, pi: int, pos: int, b: int) -> bool:
        return may_take(self.slots[pi], pos, b, self.rack_of, self.k)

    def reroute(self, pid: int, b: int) -> None:
        """Placement pid now receives b instead of its current receiver (who gets a unit back)."""
        pi, pos, old = self.placements[pid]
        self.by_receiver[old].remove(pid)
        self.pool.add(old, +1)
        self.slots[pi][pos] = b
        self.placements[pid][2] = b
        self.by_receiver[b].append(pid)
        self.pool.add(b, -1)

    def fill_holes(self, holes: list[tuple[int, int]], rng: random.Random) -> list[tuple[int, int]]:
        """Each hole to the receiver with the most units left that fits it, else by an augmenting
        path. Returns the holes neither could fill."""
        pool, fits = self.pool, self.fits
        rng.shuffle(holes)
        stuck_holes = []
        for pi, pos in holes:
            b = next((b for b in pool.brokers() if fits(pi, pos, b)), HOLE)
            if b >= 0:
                self.place(pi, pos, b)
            elif not _augment_hole(pi, pos, pool, self.placements, self.by_receiver, fits, self.place, self.reroute):
                stuck_holes.append((pi, pos))
        return stuck_holes

    def fresh(self, b: int, window: bool) -> tuple[int, int, int] | None:
        """A replica of a broker above its count that b may replace: (partition, slot, broker)."""
        over, over_order, rack_of, k = self.over, self.over_order, self.rack_of, self.k
        for same_rack_only in (True, False) if k > 1 else (False,):
            for step in range(len(over_order)):
                x = over_order[(self.turn + step) % len(over_order)]
                if over[x] <= 0 or (same_rack_only and rack_of[x] != rack_of[b]):
                    continue
                found = _shed_candidate(x, b, self.slots, self.holders[x], self.cursor, rack_of, k, window)
                if found is not None:
                    self.turn = (self.turn + step + 1) % len(over_order)
                    return found[0], found[1], x
        return None

    def shed(self, found: tuple[int, int, int], b: int) -> None:
        pi, pos, x = found
        self.over[x] -= 1
        self.place(pi, pos, b)

    def move_surplus(self, rng: random.Random) -> bool:
        """The receiver with the most units left takes a replica from a broker above its count; a
        receiver that fits none waits until every other is placed, then takes one by an augmenting
        path, else by an exchange that costs a second move. Returns whether every receiver got its
        units."""
        pool, over = self.pool, self.over
        self.cursor = dict.fromkeys(self.holders, 0)
        self.over_order = over_order = sorted(over)
        rng.shuffle(over_order)
        stuck: list[int] = []
        while over_order and pool.top > 0:
            b = next(pool.brokers())
            found = self.fresh(b, window=True) or self.fresh(b, window=False)
            if found is not None:
                self.shed(found, b)
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
            if _augment_receiver(
                b,
                self.placements,
                self.by_receiver,
                self.fits,
                self.reroute,
                lambda r: self.fresh(r, window=False),
                self.shed,
            ):
                continue
            # the counts can still be met, at the cost of a second move
            x = next(
                (
                    x
                    for x in over_order
                    if over[x] > 0 and _exchange_into(x, b, self.slots, self.holders, self.rack_of, self.k)
                ),
                HOLE,
            )
            if x >= 0:
                over[x] -= 1
                pool.add(b, -1)
            else:
                exact = False
        return exact

    def fill_stuck_holes(self, stuck_holes: list[tuple[int, int]], targets: Mapping[int, int], n: int) -> bool:
        """Holes nobody could fill: an exchange with another partition, else any broker that fits (of
        the `n` brokers). Returns whether every hole was filled by an exchange."""
        slots, pool, rack_of, k = self.slots, self.pool, self.rack_of, self.k
        exact = True
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
                candidates = [b for b in range(n) if b not in row]
                fitting = [b for b in candidates if may_take(row, pos, b, rack_of, k)] or candidates
                row[pos] = min(fitting, key=lambda b: (now[b] - targets.get(b, 0), b))
        return exact


def _slot_counts(slots: list[list[int]]) -> defaultdict[int, int]:
    """Replicas per broker index over a topic's slots (holes left out)."""
    counts: defaultdict[int, int] = defaultdict(int)
    for row in slots:
        for b in row:
            if b >= 0:
                counts[b] += 1
    return counts


_WINDOW = 24
"""How many candidates a greedy step looks at before falling back to a full scan."""

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
        if may_take(row, pos, b, rack_of, k):
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
                if may_take(row_p, pos_x, y, rack_of, k) and may_take(row_q, pos_y, b, rack_of, k):
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
            if may_take(row_p, pos, y, rack_of, k) and may_take(row_q, pos_y, b, rack_of, k):
                row_p[pos] = y
                row_q[pos_y] = b
                return True
    return False

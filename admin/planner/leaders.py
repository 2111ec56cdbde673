"""Leaders: a capacitated matching of partitions to their replicas that keeps the current leader
wherever the counts allow (per topic in phase 4, and for balancing bytes), and phase 5, the
cluster-wide leader repair by reordering replica lists (no data moves), over the partitions that
`needs_leader_repair` picks when per-topic leader counts could not all be met (sparse topics, or
topics of RF 1, whose leaders are pinned to their replicas).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Mapping, Sequence

from kafkaops.admin.planner.layout import HOLE
from kafkaops.admin.planner.targets import Targets


def assign_leaders(
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
    matching = _LeaderMatching(sets, original, targets)
    matching.hand_over()
    exact = matching.lead_every_partition()
    exact = matching.relieve_caps() and exact
    floors = targets if floors is None else floors
    exact = matching.raise_floors(floors) and exact
    count = matching.count
    if any(count(b) > targets.get(b, 0) or count(b) < floors.get(b, 0) for b in set(targets) | set(matching.led)):
        exact = False
    return matching.lead, exact


class _LeaderMatching:
    """Which replica leads each partition (`lead`), the partitions each broker leads (`led`), and the
    leaderships each broker may still take below its cap (`room`, negative above it)."""

    def __init__(self, sets: Sequence[Sequence[int]], original: Sequence[int], targets: Mapping[int, int]) -> None:
        self.sets = sets
        self.room = room = defaultdict(int, targets)
        self.lead = lead = [HOLE] * len(sets)
        self.led: dict[int, dict[int, None]] = defaultdict(dict)
        for p, o in enumerate(original):
            if o >= 0 and o in sets[p]:
                lead[p] = o
                self.led[o][p] = None
                room[o] -= 1

    def count(self, b: int) -> int:
        led = self.led
        return len(led[b]) if b in led else 0

    def move(self, p: int, to: int) -> None:
        lead, led, room = self.lead, self.led, self.room
        old = lead[p]
        if old >= 0:
            del led[old][p]
            room[old] += 1
        lead[p] = to
        led[to][p] = None
        room[to] -= 1

    def hand_over(self) -> None:
        """Brokers above their cap hand partitions to a replica with room; a partition without a
        leader takes the replica with the most room, if it has any."""
        sets, lead, led, room, move = self.sets, self.lead, self.led, self.room, self.move
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

    def lead_every_partition(self) -> bool:
        """A leader for every partition still without one, by an augmenting path or else the replica
        with the most room. Returns whether every one found a path."""
        sets, lead, room = self.sets, self.lead, self.room
        exact = True
        for p in range(len(sets)):
            if lead[p] < 0 and not self.augment([p]):
                best = max(sets[p], key=lambda b: room[b])
                self.move(p, best)
                exact = False
        return exact

    def relieve_caps(self) -> bool:
        """Augmenting paths away from every broker still above its cap. Returns whether all got there."""
        led, room = self.led, self.room
        exact = True
        for o in sorted(b for b in list(led) if room[b] < 0):
            while room[o] < 0:
                if not self.augment(list(led[o])):
                    exact = False
                    break
        return exact

    def augment(self, starts: list[int]) -> bool:
        """An augmenting path: a start partition -> a replica broker -> a partition it leads -> ...
        -> a broker with room (breadth-first); shift every leader on it one step."""
        sets, lead, led, room = self.sets, self.lead, self.led, self.room
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
            self.move(p, b)
        return True

    def raise_floors(self, floors: Mapping[int, int]) -> bool:
        """Brokers below their floor take a leadership from a replica set they share with a broker
        above its floor, possibly through a chain of brokers exactly at their floor. Returns whether
        every floor was reached."""
        contains: dict[int, list[int]] = defaultdict(list)
        for p, replicas in enumerate(self.sets):
            for b in replicas:
                contains[b].append(p)
        count = self.count
        exact = True
        for u in sorted(b for b in floors if count(b) < floors[b]):
            while count(u) < floors[u]:
                if not self._raise(u, floors, contains):
                    exact = False
                    break
        return exact

    def _raise(self, u: int, floors: Mapping[int, int], contains: Mapping[int, list[int]]) -> bool:
        lead, count = self.lead, self.count
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
                        self.move(p, x)
                        v = x
                    return True
                queue.append(v)
        return False


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


RepairRow = tuple[str, int, list[int], int]


def repair_leaders(
    pick: Callable[[bool], Sequence[RepairRow]], leader_counts: Sequence[int], targets: Targets
) -> dict[tuple[str, int], list[int]]:
    """Phase 5 for both engines: the replica lists to reorder, by (topic, partition).

    `pick(False)` gives the rows `needs_leader_repair` picks, `pick(True)` every partition's. The
    narrow pick is enough almost always; but a leadership may have to pass on through partitions
    whose replicas all lead their target already (broker 1 above its cap, broker 8 below its floor,
    and only a chain t0-6 [1,2] -> t0-1 [2,0] -> ... between them), so when the counts are still out
    of bounds after it, the repair runs again over every partition.
    """
    caps, floors = targets.broker_leaders, targets.leader_floors
    rows = pick(False)
    fixed = fix_leaders(rows, leader_counts, caps, floors)
    after = list(leader_counts)
    for (_, _, before, _), (_, _, replicas) in zip(rows, fixed, strict=True):
        after[before[0]] -= 1
        after[replicas[0]] += 1
    if not leaders_balanced(after, targets):
        fixed = fix_leaders(pick(True), leader_counts, caps, floors)
    return {(topic, pid): replicas for topic, pid, replicas in fixed}


def fix_leaders(
    rows: Sequence[RepairRow],
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
    leaders, _ = assign_leaders(sets, preferred, room, low)
    return [
        (topic, pid, [lead] + [b for b in replicas if b != lead])
        for (topic, pid, replicas, _), lead in zip(rows, leaders, strict=True)
    ]

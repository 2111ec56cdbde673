"""Which brokers take a topic's "+1"s (phase 3): a degree-constrained bipartite assignment between
topics and brokers, solved greedily so that a +1 lands where the topic already has a replica to keep
(that saves a move), then improved by a bounded local search (a chain of +1s moving between brokers,
or the cluster's own +1 moving to another broker) while any chain keeps more replicas in place.

Known shortcut: greedy with local repair, not an exact min-cost flow.
"""

from __future__ import annotations

import dataclasses
import random
from collections import defaultdict, deque
from collections.abc import Sequence

from kafkaops.admin.planner.layout import HOLE


@dataclasses.dataclass
class ClusterExtras:
    """The cluster's "+1"s: `holders` get one more than the level, any of `candidates` could instead.

    The solver may hand a +1 from one holder to another candidate when that keeps a replica (or a
    leader) in place: the cluster stays within 1 either way.
    """

    holders: set[int]
    candidates: set[int]
    level: int  # every candidate's target without a +1


@dataclasses.dataclass
class ExtrasNode:
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

    def __init__(self, nodes: list[ExtrasNode], budget: list[int], rack_of: Sequence[int]) -> None:
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


def assign_extras(
    nodes: list[ExtrasNode],
    budget: list[int],
    rng: random.Random,
    optional: ClusterExtras | None = None,
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
    _take_preferred(state, rng)
    short = _take_restricted(state) + _take_spread(state, rng)
    violated = _take_last_resort(state, short)
    _improve(state, optional)
    return state.chosen, violated


def _take_preferred(state: _Choices, rng: random.Random) -> None:
    """(A) Preferred brokers: first those with budget for every node preferring them, then the
    contended ones round-robin over the nodes (each node's in a seeded order)."""
    nodes, budget, need, allowed, take = state.nodes, state.budget, state.need, state.allowed, state.take
    wanted = [0] * len(budget)
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


def _take_restricted(state: _Choices) -> list[int]:
    """(B) Nodes limited to some brokers or racks, fewest spare choices first, each from the brokers
    with most budget left. Returns the nodes still short."""
    nodes, budget, need, allowed, take = state.nodes, state.budget, state.need, state.allowed, state.take
    n = len(budget)
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
    return short


def _take_spread(state: _Choices, rng: random.Random) -> list[int]:
    """(B) The other nodes, from a sequence in which every broker's budget is spread evenly (ties in
    a seeded order). Returns the nodes still short."""
    nodes, budget, need, allowed, take = state.nodes, state.budget, state.need, state.allowed, state.take
    n = len(budget)
    short: list[int] = []
    open_nodes = [i for i in range(len(nodes)) if need[i] and nodes[i].eligible is None and not nodes[i].rack_room]
    if not open_nodes:
        return short
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
    return short


def _take_last_resort(state: _Choices, short: list[int]) -> set[int]:
    """(C) Exchanges, then brokers beyond their budget (rack caps too, if nothing else is left).
    Returns the nodes that had to break a budget or a cap."""
    nodes, budget, need, allowed, take = state.nodes, state.budget, state.need, state.allowed, state.take
    violated: set[int] = set()
    for i in short:
        while need[i] and _exchange(i, state):
            pass
        if need[i]:
            eligible = nodes[i].eligible
            pool = [b for b in (eligible if eligible is not None else range(len(budget))) if b not in state.used[i]]
            pool.sort(key=lambda b: (not allowed(i, b), -budget[b], b))
            for b in pool[: need[i]]:
                take(i, b)
            violated.add(i)
    return violated


_IMPROVE_WORK = 400_000
"""Bound on the candidate checks of the local search, so that it stays linear at scale."""


_Step = tuple[str, int, int, int]
"""One step of an improving chain: ("move", node, from broker, to broker), ("optional", from broker,
to broker, 0) for the cluster's +1, or ("spare", broker, freed broker, 0) for spare budget."""


def _improve(state: _Choices, optional: ClusterExtras | None) -> None:
    """Local search on the +1s: node i swaps a broker c it does not prefer for a preferred broker p.

    Broker p then holds one +1 too many. That is resolved (depth-first, at most three steps) by p's
    budget, by the cluster's optional +1 moving to p (from c, or from a holder h that then sheds a
    +1), or by another node m moving its +1 from p to a broker it prefers at least as much — which
    may push the surplus on. A chain is applied only if it keeps more replicas (or leaders) in place
    in all; every count stays within its bounds. Repeats while anything improves, within a budget.
    """
    search = _Search(state, optional)
    nodes, chosen, used, prefs = state.nodes, state.chosen, state.used, search.prefs
    for _ in range(8):
        improved = False
        for i, node in enumerate(nodes):
            if search.work > _IMPROVE_WORK:
                return
            for p in node.preferred:
                if p in used[i]:
                    continue
                steps = None
                for c in [c for c in chosen[i] if c not in prefs[i]]:
                    if not state.allowed(i, p, leaving=c):
                        continue
                    steps = search.resolve(p, c, 1, 0, [("move", i, c, p)])
                    if steps:
                        break
                if not steps:
                    continue
                search.apply(steps)
                improved = True
        if not improved:
            break


class _Search:
    """The local search's view of the +1s: which nodes hold one on each broker, and the work spent."""

    def __init__(self, state: _Choices, optional: ClusterExtras | None) -> None:
        self.state = state
        self.optional = optional
        self.prefs = [set(node.preferred) for node in state.nodes]
        self.users: dict[int, dict[int, None]] = defaultdict(dict)  # broker -> nodes holding a +1 there
        for i, picks in enumerate(state.chosen):
            for b in picks:
                self.users[b][i] = None
        self.work = 0

    def resolve(self, y: int, c: int, gain: int, depth: int, trail: list[_Step]) -> list[_Step] | None:
        """Broker y has one +1 too many and c one too few; find steps with total gain > 0."""
        state, optional, budget = self.state, self.optional, self.state.budget
        if y == c:
            return trail if gain > 0 else None
        if budget[y] > 0 and budget[c] >= 0 and gain > 0:
            return [*trail, ("spare", y, c, 0)]
        if optional is not None and y in optional.candidates and y not in optional.holders:
            if c in optional.holders and gain > 0:
                return [*trail, ("optional", c, y, 0)]
            if depth < 3:
                for h in list(optional.holders):
                    self.work += 1
                    if h == y or self.work > _IMPROVE_WORK or any(h in step[1:] for step in trail):
                        continue
                    found = self.resolve(h, c, gain, depth + 1, [*trail, ("optional", h, y, 0)])
                    if found:
                        return found
        moved = {step[1] for step in trail if step[0] == "move"}
        prefs = self.prefs
        for m in list(self.users[y]):
            self.work += 1
            if self.work > _IMPROVE_WORK:
                return None
            if m in moved:  # each node moves at most once in a chain, so the chain stays consistent
                continue
            w_old = y in prefs[m]
            if state.allowed(m, c, leaving=y) and gain - w_old + (c in prefs[m]) > 0:
                return [*trail, ("move", m, y, c)]
            if depth < 3:
                for z in state.nodes[m].preferred:
                    if z == y or any(z in step[2:] for step in trail) or not state.allowed(m, z, leaving=y):
                        continue
                    self.work += 1
                    found = self.resolve(z, c, gain - w_old + 1, depth + 1, [*trail, ("move", m, y, z)])
                    if found:
                        return found
        return None

    def apply(self, steps: list[_Step]) -> None:
        optional, budget, users = self.optional, self.state.budget, self.users
        for kind, a, b, c in steps:
            if kind == "move":  # node a's +1 from b to c
                self.state.swap(a, b, c)
                del users[b][a]
                users[c][a] = None
            elif kind == "optional" and optional is not None:  # the cluster's +1: from a to b
                optional.holders.discard(a)
                optional.holders.add(b)
            else:  # spare budget at a absorbs the surplus, b's freed unit becomes spare
                budget[a] -= 1
                budget[b] += 1


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

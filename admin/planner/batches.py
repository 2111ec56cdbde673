"""A plan cut into reassignment files to execute one after another, the cluster balanced in between."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from kafkaops.admin.planner.layout import Key
from kafkaops.cluster.common.errors import InvalidArgumentError


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

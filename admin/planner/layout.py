"""The target cluster and the rules every plan keeps: brokers as indices, racks, the rack rule of a
partition, and the checks of an assignment before any planning."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

from kafkaops.cluster.common.errors import (
    AdminOperationError,
    InvalidArgumentError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
)

Key = tuple[str, int]
"""A partition: (topic, partition id). Plain tuples, not TopicPartition: a plan has a million of them."""

HOLE = -1
"""A replica slot whose replica must move (its broker is not a target, or it breaks the rack rule)."""


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


def may_take(slots: Sequence[int], pos: int, broker: int, rack_of: Sequence[int], num_racks: int) -> bool:
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

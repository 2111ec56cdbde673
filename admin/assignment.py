"""Kafka's replica assignment, reproduced exactly (Kafka 2.8 `AdminUtils`, `AdminZkClient`, `TopicCommand`).

Operators compare our assignments with what Kafka would have produced and script against Kafka's error
texts, so this module is a port, not a re-design: the same arithmetic, the same random draws in the same
order from a `java.util.Random`-compatible generator, the same checks in the same order with the same
messages. Everything here is pure: no ZooKeeper, no clock except `JavaRandom()`'s default seed.

Where Kafka prints a Scala collection we print it as Kafka 2.8 built for Scala 2.13 (the default
distribution) does; `scala_hash_set_order` gives the iteration order of its immutable hash sets and maps.

Deliberate departures, each where Kafka's ZooKeeper path accepts input that breaks a topic:
`validate_create_assignment` rejects replication factor 0 and checks partition ids exactly (Kafka's
sum-based check accepts e.g. {-1, 0, 3}); `new_partitions_assignment` rejects a manual assignment that
does not cover exactly the new partitions (Kafka's broker-side text for the same mistake).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from kafkaops.cluster.common.errors import (
    AdminOperationError,
    BrokerNotAvailableError,
    InvalidArgumentError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
)
from kafkaops.cluster.common.jvm_text import (
    java_parse_int,
    java_split,
    java_trim,
    scala_hash_set_order,
    scala_immutable_map,
    scala_list_text,
    scala_map_text,
    scala_set_order,
)

__all__ = [
    "IntRandom",
    "JavaRandom",
    "assign_replicas_to_brokers",
    "new_partitions_assignment",
    "parse_replica_assignment",
    "rack_alternated_broker_list",
    "validate_create_assignment",
]


class IntRandom(Protocol):
    """The one operation the assignment needs from a random source (Java's `Random.nextInt(bound)`)."""

    def next_int(self, bound: int) -> int: ...


_MULTIPLIER = 0x5DEECE66D
_ADDEND = 0xB
_MASK = (1 << 48) - 1
_INT_LIMIT = 1 << 31
_LONG_MASK = (1 << 64) - 1

_seed_uniquifier = 8682522807148012
_seed_lock = threading.Lock()


def _default_seed() -> int:
    """Java's `new Random()` seed: a per-process sequence XOR a monotonic nanosecond clock."""
    global _seed_uniquifier
    with _seed_lock:
        _seed_uniquifier = (_seed_uniquifier * 1181783497276652981) & _LONG_MASK
        return _seed_uniquifier ^ time.monotonic_ns()


class JavaRandom:
    """`java.util.Random`, bit for bit, so a seed gives the same draws as Kafka's `AdminUtils.rand`.

    Not thread-safe (Java's is, through an atomic seed): give each thread its own instance.
    """

    def __init__(self, seed: int | None = None) -> None:
        self._seed = ((_default_seed() if seed is None else seed) ^ _MULTIPLIER) & _MASK

    def _next31(self) -> int:
        self._seed = (self._seed * _MULTIPLIER + _ADDEND) & _MASK
        return self._seed >> 17

    def next_int(self, bound: int) -> int:
        """A uniform int in [0, bound); bound must be a positive Java int (else ValueError)."""
        if not 0 < bound < _INT_LIMIT:
            raise ValueError(f"bound must be a positive Java int, got {bound}")
        r = self._next31()
        m = bound - 1
        if bound & m == 0:  # a power of two: take the high bits
            return (bound * r) >> 31
        u = r
        # Java rejects a draw when `u - r + m` overflows an int (the last, incomplete run of `bound`).
        while u - (r := u % bound) + m >= _INT_LIMIT:
            u = self._next31()
        return r


def _replica_index(first: int, shift: int, j: int, n: int) -> int:
    """Kafka's `AdminUtils.replicaIndex`: the j-th follower, never the leader's slot."""
    return (first + 1 + (shift + j) % (n - 1)) % n


def rack_alternated_broker_list(racks: Mapping[int, str]) -> list[int]:
    """Brokers taken one per rack in turn (racks sorted, brokers sorted within a rack).

    Round-robin over this list puts consecutive replicas on different racks: Kafka's
    `getRackAlternatedBrokerList`, e.g. {0:r1, 1:r3, 2:r3, 3:r2, 4:r2, 5:r1} -> [0, 3, 1, 5, 4, 2].
    """
    by_rack: dict[str, list[int]] = {}
    for broker, rack in racks.items():
        by_rack.setdefault(rack, []).append(broker)
    # Java sorts strings by UTF-16 code unit; big-endian UTF-16 bytes compare the same way.
    columns = [sorted(by_rack[r]) for r in sorted(by_rack, key=lambda r: r.encode("utf-16-be", "surrogatepass"))]
    return [b for row in itertools.zip_longest(*columns) for b in row if b is not None]


def _rack_aware_replicas(
    arranged: Sequence[int], rack_of: Mapping[int, str], num_racks: int, first: int, shift: int, rf: int
) -> list[int]:
    """Followers walk the rack-alternated list, skipping a used rack until every rack holds a replica.

    `k` runs on across followers (it is not reset), as in Kafka.
    """
    n = len(arranged)
    replicas = [arranged[first]]
    racks_used = {rack_of[arranged[first]]}
    k = 0
    while len(replicas) < rf:
        broker = arranged[_replica_index(first, shift * num_racks, k, n)]
        rack = rack_of[broker]
        # Kafka's second clause (`== n`) only matters for duplicate broker ids; it keeps the loop finite.
        if (rack not in racks_used or len(racks_used) == num_racks) and (broker not in replicas or len(replicas) == n):
            replicas.append(broker)
            racks_used.add(rack)
        k += 1
    return replicas


def assign_replicas_to_brokers(
    brokers: Sequence[int],
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    racks: Mapping[int, str] | None = None,
    rng: IntRandom | None = None,
) -> dict[int, list[int]]:
    """Kafka's `AdminUtils.assignReplicasToBrokers`: partition id -> replicas, leader first.

    Leaders go round-robin over the brokers (over the rack-alternated list when every broker has a
    rack) from a start index; followers follow at a shift that grows by one at each positive multiple
    of the broker count met during this call. Both come from `fixed_start_index` when it is >= 0, else
    from two draws `rng.next_int(n)` (start index first, then shift; `rng` defaults to a fresh
    time-seeded `JavaRandom`). Partition ids start at max(0, start_partition_id).

    `brokers` is in Kafka's order (callers pass ids sorted ascending); `racks` maps broker id to rack,
    and is used only when at least one of `brokers` has a rack.

    Raises InvalidPartitionsError, InvalidReplicationFactorError, and AdminOperationError when only
    some brokers have a rack.
    """
    if n_partitions <= 0:
        raise InvalidPartitionsError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorError("Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise InvalidReplicationFactorError(
            f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}."
        )
    rack_of = {b: racks[b] for b in brokers if b in racks} if racks else {}
    if rack_of and any(b not in rack_of for b in brokers):
        raise AdminOperationError("Not all brokers have rack information for replica rack aware assignment.")
    arranged = rack_alternated_broker_list(rack_of) if rack_of else list(brokers)
    num_racks = len(set(rack_of.values()))
    n = len(arranged)

    if fixed_start_index >= 0:
        start_index = shift = fixed_start_index
    else:
        rng = JavaRandom() if rng is None else rng
        start_index = rng.next_int(n)
        shift = rng.next_int(n)

    assignment: dict[int, list[int]] = {}
    first_pid = max(0, start_partition_id)
    for pid in range(first_pid, first_pid + n_partitions):
        if pid > 0 and pid % n == 0:
            shift += 1
        first = (pid + start_index) % n
        if rack_of:
            assignment[pid] = _rack_aware_replicas(arranged, rack_of, num_racks, first, shift, replication_factor)
        else:
            assignment[pid] = [arranged[first]] + [
                arranged[_replica_index(first, shift, j, n)] for j in range(replication_factor - 1)
            ]
    return assignment


def new_partitions_assignment(
    topic: str,
    existing: Mapping[int, Sequence[int]],
    brokers: Sequence[int],
    num_partitions: int,
    racks: Mapping[int, str] | None = None,
    replica_assignment: Mapping[int, Sequence[int]] | None = None,
    rng: IntRandom | None = None,
) -> dict[int, list[int]]:
    """The replicas of the partitions that grow `topic` to `num_partitions` (only the new ones).

    Kafka 2.8 `AdminZkClient.createNewPartitionsAssignment`. Without a manual assignment (None or
    empty, as TopicCommand treats an assignment that lists only existing partitions) the new
    partitions continue the topic's layout: same replication factor as partition 0, fixed start at
    the first broker whose id is >= partition 0's leader, partition ids from len(existing). A manual
    `replica_assignment` holds only the new partitions (TopicCommand drops the existing entries) and
    is validated against `brokers`. `brokers` and `racks` are the live brokers as Kafka's
    `getBrokerMetadatas` gives them (sorted by id; racks already checked for the rack-aware mode).

    Raises AdminOperationError (no partition 0), InvalidPartitionsError (not an increase),
    InvalidReplicaAssignmentError / BrokerNotAvailableError (bad manual assignment), and the errors of
    `assign_replicas_to_brokers`.
    """
    if 0 not in existing:
        shown = scala_immutable_map(
            {
                p: f"ReplicaAssignment(replicas={_join(r, ',')}, addingReplicas=, removingReplicas=)"
                for p, r in existing.items()
            }
        )
        raise AdminOperationError(
            f"Unexpected existing replica assignment for topic '{topic}', partition id 0 is missing. "
            f"Assignment: {shown}"
        )
    partition0 = existing[0]
    to_add = num_partitions - len(existing)
    if to_add <= 0:
        raise InvalidPartitionsError(
            f"The number of partitions for a topic can only be increased. Topic {topic} currently has "
            f"{len(existing)} partitions, {num_partitions} would not be an increase."
        )
    if not replica_assignment:
        start_index = next((i for i, b in enumerate(brokers) if b >= partition0[0]), 0)
        return assign_replicas_to_brokers(
            brokers, to_add, len(partition0), start_index, len(existing), racks=racks, rng=rng
        )
    _validate_replica_assignment(replica_assignment, len(partition0), brokers)
    new_ids = list(range(len(existing), num_partitions))
    if sorted(replica_assignment) != new_ids:
        if len(replica_assignment) != to_add:
            raise InvalidReplicaAssignmentError(
                f"Increasing the number of partitions by {to_add} but {len(replica_assignment)} assignments provided."
            )
        raise InvalidReplicaAssignmentError(
            f"The replica assignment must list partitions {new_ids[0]} to {new_ids[-1]}, "
            f"not {_join(sorted(replica_assignment))}."
        )
    return {p: list(replica_assignment[p]) for p in new_ids}


def _validate_replica_assignment(
    assignment: Mapping[int, Sequence[int]], expected_rf: int, brokers: Sequence[int]
) -> None:
    """Kafka's `AdminZkClient.validateReplicaAssignment`: per partition in order, then the RF check."""
    for partition, replicas in assignment.items():
        if not replicas:
            raise InvalidReplicaAssignmentError(f"Cannot have replication factor of 0 for partition id {partition}.")
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentError(
                f"Duplicate brokers not allowed in replica assignment: {_join(replicas)} for partition id {partition}."
            )
        check_brokers_available(partition, replicas, brokers)
    bad = sorted((p, len(r)) for p, r in assignment.items() if len(r) != expected_rf)
    if bad:
        raise InvalidReplicaAssignmentError(
            f"Inconsistent replication factor between partitions, partition 0 has {expected_rf} while "
            f"partitions [{_join(p for p, _ in bad)}] have replication factors "
            f"[{_join(rf for _, rf in bad)}], respectively."
        )


def check_brokers_available(partition: int, replicas: Sequence[int], brokers: Sequence[int]) -> None:
    """Every replica of `partition` must be a registered broker (Kafka's add-partitions text)."""
    if not set(brokers).issuperset(replicas):
        raise BrokerNotAvailableError(
            f"Some brokers specified for partition id {partition} are not available. Specified brokers: "
            f"{_join(replicas)}, available brokers: {_join(scala_set_order(brokers))}.",
            named=False,
        )


def validate_create_assignment(assignment: Mapping[int, Sequence[int]]) -> None:
    """The assignment checks of Kafka 2.8 `AdminZkClient.validateTopicCreate`, in Kafka's order.

    Kafka prints the whole assignment on duplicates, as the LinkedHashMap TopicCommand parsed. Beyond
    Kafka: replication factor 0 is refused (Kafka's ZooKeeper path would write a topic without
    replicas) and partition ids must be exactly 0..n-1 (Kafka compares sums).

    Raises InvalidReplicaAssignmentError, InvalidReplicationFactorError.
    """
    sizes = {len(r) for r in assignment.values()}
    if len(sizes) != 1:
        raise InvalidReplicaAssignmentError("All partitions should have the same number of replicas")
    if sizes == {0}:
        raise InvalidReplicationFactorError("Replication factor must be larger than 0.")
    if any(len(set(r)) != len(r) for r in assignment.values()):
        shown = scala_map_text(((p, scala_list_text(r)) for p, r in assignment.items()), "LinkedHashMap")
        raise InvalidReplicaAssignmentError(f"Duplicate replica assignment found: {shown}")
    if set(assignment) != set(range(len(assignment))):
        raise InvalidReplicaAssignmentError("partitions should be a consecutive 0-based integer sequence")


def parse_replica_assignment(text: str) -> dict[int, list[int]]:
    """kafka-topics `--replica-assignment`: "b1:b2,b3:b4" -> {0: [b1, b2], 1: [b3, b4]}.

    Kafka 2.8 `TopicCommand.parseReplicaAssignment`, with Java's split and trim. "" gives {} (Kafka
    treats an empty value as not given); text made only of separators such as "," also gives {},
    which `validate_create_assignment` rejects as Kafka does. Where Kafka prints a Java array's
    identity (`[I@1b6d3586`) for a different replication factor, we print the broker list.

    Raises InvalidArgumentError (duplicates in a partition, a non-integer) and AdminOperationError
    (a partition sized differently from partition 0).
    """
    if not text:
        return {}
    assignment: dict[int, list[int]] = {}
    for partition, part in enumerate(java_split(text, ",")):
        replicas = [java_parse_int(java_trim(b)) for b in java_split(part, ":")]  # Scala's `s.trim.toInt`
        duplicates = {b for b in replicas if replicas.count(b) > 1}
        if duplicates:  # Kafka's CoreUtils.duplicates yields them in Scala HashMap order
            shown = _join(scala_hash_set_order(duplicates), ",")
            raise InvalidArgumentError(f"Partition replica lists may not contain duplicate entries: {shown}")
        assignment[partition] = replicas
        if len(replicas) != len(assignment[0]):
            raise AdminOperationError(f"Partition {partition} has different replication factor: {replicas}")
    return assignment


def _join(values: Iterable[object], sep: str = ", ") -> str:
    return sep.join(map(str, values))

"""Partition reassignment decisions (Kafka 2.8, KIP-455; kafka-reference.md §5.7, §5.8) as pure functions.

The controller (`controller.py`) does the I/O of Kafka's `onPartitionReassignment`; what it decides
on is here, over plain values: which entries of `/admin/reassign_partitions` start a reassignment and
which are refused (and why, as Kafka's `ApiError`), whether a reassignment is complete, which replicas
a superseding reassignment leaves behind, how the leader moves at the end, and what remains of the
znode once entries are taken out.

One deliberate difference from Kafka 2.8: Kafka validates the replica list (`validateReplicas`) only
for the AlterPartitionReassignments API and takes `/admin/reassign_partitions` entries as they come,
so an empty list would stop every replica of the partition and an unknown broker would leave the
reassignment hanging. Here the znode is the only way in, so its entries get the API's checks; the
liveness check applies to the replicas the entry would newly start, so that an entry resubmitted for
(or resumed with) a reassignment already under way is not refused because one of its adding brokers
died meanwhile.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field

from kafkaops.cluster.common.errors import (
    BrokerError,
    InvalidReplicaAssignmentError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
)
from kafkaops.cluster.common.jvm_text import scala_immutable_set, scala_mutable_hash_order
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition


def scala_list(ids: Iterable[int]) -> str:
    """`toString` of a Scala `List[Int]` / `Seq[Int]`: `List(1, 2)`."""
    return "List(" + ", ".join(map(str, ids)) + ")"


@dataclass(frozen=True)
class ApiError:
    """Kafka's `org.apache.kafka.common.requests.ApiError`: the outcome of one partition's request."""

    error: type[BrokerError]
    message: str | None = None

    def __str__(self) -> str:
        message = self.message if self.message is not None else "null"
        return f"ApiError(error={self.error.name}, message={message})"


PARTITION_DOES_NOT_EXIST = ApiError(UnknownTopicOrPartitionError, "The partition does not exist.")
UNKNOWN_SERVER_ERROR = ApiError(UnknownServerError)


def validate_replicas(
    replicas: Sequence[int], current: ReplicaAssignment, live_broker_ids: Set[int]
) -> ApiError | None:
    """Kafka's `validateReplicas` (INVALID_REPLICA_ASSIGNMENT, Kafka's texts): not empty, no duplicate,
    no negative id, and every replica the reassignment would newly start on a live broker.

    "Newly start" = the reassignment's adding replicas that are not replicas of the partition already
    (see the module docstring); for a partition not being reassigned that is Kafka's rule exactly.
    """
    if not replicas:
        return ApiError(InvalidReplicaAssignmentError, "Empty replica list specified in partition reassignment.")
    if len(set(replicas)) != len(replicas):
        return ApiError(
            InvalidReplicaAssignmentError,
            f"Duplicate replica ids in partition reassignment replica list: {scala_list(replicas)}",
        )
    if any(r < 0 for r in replicas):
        return ApiError(InvalidReplicaAssignmentError, f"Invalid broker id in replica list: {scala_list(replicas)}")
    new_assignment = current.reassign_to(replicas)
    started = [r for r in new_assignment.adding_replicas if r not in current.replicas]
    if not set(started) <= set(live_broker_ids):
        live = scala_immutable_set(scala_mutable_hash_order(live_broker_ids))
        return ApiError(
            InvalidReplicaAssignmentError,
            "Replica assignment has brokers that are not alive. Replica list: "
            f"{scala_list(new_assignment.adding_replicas)}, live broker list: {live}",
        )
    return None


@dataclass(frozen=True)
class ZkReassignmentPlan:
    """What to do with the entries of `/admin/reassign_partitions`, in the znode's order."""

    to_start: dict[TopicPartition, ReplicaAssignment] = field(default_factory=dict)
    """Partitions to hand to `onPartitionReassignment`, with their new full assignment."""
    failed: dict[TopicPartition, ApiError] = field(default_factory=dict)
    """Entries refused before anything was written: they are removed from the znode."""
    being_deleted: tuple[TopicPartition, ...] = ()
    """The refused entries whose topic is queued for deletion (Kafka logs each at INFO)."""
    unchanged: tuple[TopicPartition, ...] = ()
    """Entries asking for exactly the reassignment already under way: nothing to do."""


def plan_zk_reassignments(
    requested: Mapping[TopicPartition, Sequence[int]],
    assignment_of: Callable[[TopicPartition], ReplicaAssignment],
    queued_for_deletion: Callable[[str], bool],
    live_broker_ids: Set[int],
    *,
    resume: bool,
) -> ZkReassignmentPlan:
    """`processZkPartitionReassignment` up to the trigger: each entry becomes `reassignTo(target)` of the
    partition's current assignment (`maybeBuildReassignment`), unless its topic is queued for deletion
    or the partition does not exist (UNKNOWN_TOPIC_OR_PARTITION, `maybeTriggerPartitionReassignment`)
    or its replica list is invalid (`validate_replicas`).

    The znode is read again on each of its changes, the controller's own removals of finished entries
    included; `resume=False` then leaves alone the entries whose reassignment is already under way
    with the same target (re-driving them would bump their leader epoch each time a neighbour
    finishes, and refusing them because their topic was queued for deletion meanwhile would only
    drop the entry of a reassignment that goes on). At failover (`resume=True`) every entry is driven
    again, as Kafka does.
    """
    plan = ZkReassignmentPlan()
    being_deleted: list[TopicPartition] = []
    unchanged: list[TopicPartition] = []
    for tp, target in requested.items():
        current = assignment_of(tp)
        if not resume and current.is_being_reassigned and current.reassign_to(target) == current:
            unchanged.append(tp)
            continue
        if queued_for_deletion(tp.topic):
            plan.failed[tp] = PARTITION_DOES_NOT_EXIST
            being_deleted.append(tp)
            continue
        if not current.replicas:
            plan.failed[tp] = PARTITION_DOES_NOT_EXIST
            continue
        error = validate_replicas(target, current, live_broker_ids)
        if error is not None:
            plan.failed[tp] = error
            continue
        plan.to_start[tp] = current.reassign_to(target)
    return ZkReassignmentPlan(plan.to_start, plan.failed, tuple(being_deleted), tuple(unchanged))


def format_failures(failed: Mapping[TopicPartition, ApiError]) -> str:
    """The `partitionsFailed` map of Kafka's WARN, as Scala 2.13 prints a `mutable.HashMap` (sorted here:
    Kafka's order is its hash order, which nothing may depend on)."""
    entries = sorted(failed.items(), key=lambda item: (item[0].topic, item[0].partition))
    return "HashMap(" + ", ".join(f"{tp} -> {error}" for tp, error in entries) + ")"


def is_reassignment_complete(assignment: ReplicaAssignment, isr: Sequence[int] | None) -> bool:
    """Kafka's `isReassignmentComplete`: nothing is moving, or every target replica is in the ISR
    (`isr` None: the partition has no state znode, so it cannot be complete)."""
    if not assignment.is_being_reassigned:
        return True
    if isr is None:
        return False
    return set(assignment.target_replicas) <= set(isr)


def unneeded_replicas(current: ReplicaAssignment, new: ReplicaAssignment) -> tuple[int, ...]:
    """Replicas a superseding (or cancelling) reassignment drops at once (step U3): those of the
    current full replica set that the new one no longer holds, in the current order."""
    return tuple(r for r in current.replicas if r not in new.replicas)


class LeaderMove(enum.Enum):
    """What step B3 (`moveReassignedPartitionLeaderIfRequired`) does with the partition's leader."""

    ELECT_NOT_IN_TARGET = "not in target"
    """The leader is leaving: elect one of the target replicas (Reassign strategy)."""
    RESEND = "alive in target"
    """The leader stays: bump the leader epoch and send the final replica set."""
    ELECT_DEAD = "dead in target"
    """The leader stays in the target but is not online: elect (Reassign strategy)."""

    def message(self, leader: int, partition: TopicPartition, replicas: Sequence[int]) -> str:
        """Kafka's controller.log INFO line for the decision."""
        head = f"Leader {leader} for partition {partition} being reassigned, "
        listed = ",".join(map(str, replicas))
        if self is LeaderMove.ELECT_NOT_IN_TARGET:
            return head + f"is not in the new list of replicas {listed}. Re-electing leader"
        if self is LeaderMove.RESEND:
            return head + f"is already in the new list of replicas {listed} and is alive"
        return head + f"is already in the new list of replicas {listed} but is dead"


def leader_move(completed: ReplicaAssignment, leader: int, leader_online: bool) -> LeaderMove:
    if leader not in completed.replicas:
        return LeaderMove.ELECT_NOT_IN_TARGET
    if leader_online:
        return LeaderMove.RESEND
    return LeaderMove.ELECT_DEAD


EntryFilter = Callable[[TopicPartition, tuple[int, ...]], bool]
"""Picks entries of `/admin/reassign_partitions` by partition and replica list."""


def remaining_entries(
    requested: Mapping[TopicPartition, Sequence[int]],
    remove: EntryFilter,
) -> tuple[dict[TopicPartition, tuple[int, ...]], list[TopicPartition]]:
    """`maybeRemoveFromZkReassignment`'s split: the entries to keep (in order) and the partitions removed."""
    kept: dict[TopicPartition, tuple[int, ...]] = {}
    removed: list[TopicPartition] = []
    for tp, replicas in requested.items():
        if remove(tp, tuple(replicas)):
            removed.append(tp)
        else:
            kept[tp] = tuple(replicas)
    return kept, removed


def completed_entries(completed: Mapping[TopicPartition, ReplicaAssignment]) -> EntryFilter:
    """The predicate step B7 removes finished partitions' entries with: only an entry that asked for
    exactly the replicas now in place (a newer entry for the same partition stays, to be acted on)."""

    def matches(tp: TopicPartition, replicas: tuple[int, ...]) -> bool:
        assignment = completed.get(tp)
        return assignment is not None and tuple(replicas) == assignment.replicas

    return matches

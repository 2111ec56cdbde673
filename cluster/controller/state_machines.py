"""The controller's partition and replica state machines as data (kafka-reference.md §4.3).

Kafka 2.8 `PartitionStateMachine.scala` / `ReplicaStateMachine.scala`: each state carries the set of
states it may be entered from. A batch of requested transitions is split into valid and invalid ones
*before* any I/O (STYLE 5); the caller logs every invalid one (`state_change_log`) and does the I/O
for the valid ones in one batch. Nothing here mutates anything: the controller context owns the
current states.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, NamedTuple, TypeVar

from kafkaops.cluster.zk.values import TopicPartition


class _NamedState(enum.Enum):
    """A state printed as its value, the name Kafka's state-change log prints."""

    def __str__(self) -> str:
        return str(self._value_)

    def __format__(self, spec: str) -> str:
        # f-strings call this: Enum's own goes through its generic checks (and `value` is a property),
        # ~2 us a call, and the state-change log formats several states per partition
        return str.__format__(self._value_, spec)


class PartitionState(_NamedState):
    """Kafka's `PartitionState` case objects."""

    NEW = "NewPartition"
    ONLINE = "OnlinePartition"
    OFFLINE = "OfflinePartition"
    NON_EXISTENT = "NonExistentPartition"


class ReplicaState(_NamedState):
    """Kafka's `ReplicaState` case objects."""

    NEW = "NewReplica"
    ONLINE = "OnlineReplica"
    OFFLINE = "OfflineReplica"
    DELETION_STARTED = "ReplicaDeletionStarted"
    DELETION_SUCCESSFUL = "ReplicaDeletionSuccessful"
    DELETION_INELIGIBLE = "ReplicaDeletionIneligible"
    NON_EXISTENT = "NonExistentReplica"


# Tuples, not sets: Kafka's `validPreviousStates` are Scala Sets of at most 4 elements, which iterate
# (and print, in the invalid-transition message) in insertion order, the order written here.
VALID_PREVIOUS_PARTITION_STATES: Mapping[PartitionState, tuple[PartitionState, ...]] = {
    PartitionState.NEW: (PartitionState.NON_EXISTENT,),
    PartitionState.ONLINE: (PartitionState.NEW, PartitionState.ONLINE, PartitionState.OFFLINE),
    PartitionState.OFFLINE: (PartitionState.NEW, PartitionState.ONLINE, PartitionState.OFFLINE),
    PartitionState.NON_EXISTENT: (PartitionState.OFFLINE,),
}

VALID_PREVIOUS_REPLICA_STATES: Mapping[ReplicaState, tuple[ReplicaState, ...]] = {
    ReplicaState.NEW: (ReplicaState.NON_EXISTENT,),
    ReplicaState.ONLINE: (
        ReplicaState.NEW,
        ReplicaState.ONLINE,
        ReplicaState.OFFLINE,
        ReplicaState.DELETION_INELIGIBLE,
    ),
    ReplicaState.OFFLINE: (
        ReplicaState.NEW,
        ReplicaState.ONLINE,
        ReplicaState.OFFLINE,
        ReplicaState.DELETION_INELIGIBLE,
    ),
    ReplicaState.DELETION_STARTED: (ReplicaState.OFFLINE,),
    ReplicaState.DELETION_SUCCESSFUL: (ReplicaState.DELETION_STARTED,),
    ReplicaState.DELETION_INELIGIBLE: (ReplicaState.OFFLINE, ReplicaState.DELETION_STARTED),
    ReplicaState.NON_EXISTENT: (ReplicaState.DELETION_SUCCESSFUL,),
}


class PartitionReplica(NamedTuple):
    """Kafka's `PartitionAndReplica`: one replica of one partition, the replica state machine's key
    (a named tuple: failover makes one per replica of the cluster; it sorts by topic, partition, then
    broker, the order every batch is handled in)."""

    partition: TopicPartition
    replica: int

    def __str__(self) -> str:
        return f"[Topic={self.partition.topic},Partition={self.partition.partition},Replica={self.replica}]"


def is_valid_partition_transition(current: PartitionState, target: PartitionState) -> bool:
    return current in VALID_PREVIOUS_PARTITION_STATES[target]


def is_valid_replica_transition(current: ReplicaState, target: ReplicaState) -> bool:
    return current in VALID_PREVIOUS_REPLICA_STATES[target]


K = TypeVar("K", TopicPartition, PartitionReplica)
S = TypeVar("S", PartitionState, ReplicaState)


@dataclass(frozen=True)
class InvalidTransition(Generic[K, S]):
    """A requested transition from a state that the target does not accept."""

    key: K
    current: S
    target: S

    @property
    def reason(self) -> str:
        """The message of the `IllegalStateException` Kafka logs for it (under the failed-change line)."""
        if isinstance(self.target, ReplicaState):
            previous = ",".join(str(s) for s in VALID_PREVIOUS_REPLICA_STATES[self.target])
            return (
                f"Replica {self.key} should be in the {previous} states before moving to {self.target} state. "
                f"Instead it is in {self.current} state"
            )
        previous = ",".join(str(s) for s in VALID_PREVIOUS_PARTITION_STATES[self.target])
        return (
            f"Partition {self.key} should be in one of {previous} states before moving to {self.target} state. "
            f"Instead it is in {self.current} state"
        )


@dataclass(frozen=True)
class TransitionSplit(Generic[K, S]):
    """The requested keys, in request order, split into those that may move and those that may not.

    `current` holds the state each key had when the split was made (NonExistent for keys the context
    did not know, as Kafka's `putPartitionStateIfNotExists` / `putReplicaStateIfNotExists` do): the
    caller needs it to log `from <current> to <target>` after it has changed the state.
    """

    target: S
    valid: tuple[K, ...]
    invalid: tuple[InvalidTransition[K, S], ...]
    current: Mapping[K, S]


def _split(
    keys: Iterable[K], states: Mapping[K, S], target: S, missing: S, previous: Mapping[S, tuple[S, ...]]
) -> TransitionSplit[K, S]:
    current = {k: states.get(k, missing) for k in keys}
    allowed = previous[target]
    valid = tuple(k for k, s in current.items() if s in allowed)
    invalid = tuple(InvalidTransition(k, s, target) for k, s in current.items() if s not in allowed)
    return TransitionSplit(target, valid, invalid, current)


def split_partition_transitions(
    partitions: Iterable[TopicPartition],
    states: Mapping[TopicPartition, PartitionState],
    target: PartitionState,
) -> TransitionSplit[TopicPartition, PartitionState]:
    """Kafka's `checkValidPartitionStateChange`; a partition without a state is NonExistentPartition."""
    return _split(partitions, states, target, PartitionState.NON_EXISTENT, VALID_PREVIOUS_PARTITION_STATES)


def split_replica_transitions(
    replicas: Iterable[PartitionReplica],
    states: Mapping[PartitionReplica, ReplicaState],
    target: ReplicaState,
) -> TransitionSplit[PartitionReplica, ReplicaState]:
    """Kafka's `checkValidReplicaStateChange`; a replica without a state is NonExistentReplica."""
    return _split(replicas, states, target, ReplicaState.NON_EXISTENT, VALID_PREVIOUS_REPLICA_STATES)

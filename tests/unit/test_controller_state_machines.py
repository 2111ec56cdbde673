"""Partition and replica state machines: every (current, target) pair, valid or not (reference §4.3)."""

from __future__ import annotations

import itertools

import pytest

from kafkaops.cluster.controller.state_machines import (
    VALID_PREVIOUS_PARTITION_STATES,
    VALID_PREVIOUS_REPLICA_STATES,
    InvalidTransition,
    PartitionReplica,
    PartitionState,
    ReplicaState,
    is_valid_partition_transition,
    is_valid_replica_transition,
    split_partition_transitions,
    split_replica_transitions,
)
from kafkaops.cluster.state_change_log import ControllerLog, ErrorTrace
from kafkaops.cluster.zk.values import TopicPartition

P = PartitionState
R = ReplicaState
FOO0 = TopicPartition("foo", 0)

# The tables of kafka-reference.md §4.3, written out independently of the module's tables.
VALID_PARTITION_PAIRS = {
    (P.NON_EXISTENT, P.NEW),
    (P.NEW, P.ONLINE),
    (P.ONLINE, P.ONLINE),
    (P.OFFLINE, P.ONLINE),
    (P.NEW, P.OFFLINE),
    (P.ONLINE, P.OFFLINE),
    (P.OFFLINE, P.OFFLINE),
    (P.OFFLINE, P.NON_EXISTENT),
}
VALID_REPLICA_PAIRS = {
    (R.NON_EXISTENT, R.NEW),
    *((s, R.ONLINE) for s in (R.NEW, R.ONLINE, R.OFFLINE, R.DELETION_INELIGIBLE)),
    *((s, R.OFFLINE) for s in (R.NEW, R.ONLINE, R.OFFLINE, R.DELETION_INELIGIBLE)),
    (R.OFFLINE, R.DELETION_STARTED),
    (R.DELETION_STARTED, R.DELETION_SUCCESSFUL),
    (R.OFFLINE, R.DELETION_INELIGIBLE),
    (R.DELETION_STARTED, R.DELETION_INELIGIBLE),
    (R.DELETION_SUCCESSFUL, R.NON_EXISTENT),
}


def _ids(pair: tuple[PartitionState | ReplicaState, PartitionState | ReplicaState]) -> str:
    return f"{pair[0]}->{pair[1]}"


@pytest.mark.parametrize("pair", list(itertools.product(P, P)), ids=_ids)
def test_partition_transition(pair: tuple[PartitionState, PartitionState]) -> None:
    current, target = pair
    expected = pair in VALID_PARTITION_PAIRS
    assert is_valid_partition_transition(current, target) is expected
    split = split_partition_transitions([FOO0], {FOO0: current}, target)
    assert split.valid == ((FOO0,) if expected else ())
    assert split.invalid == (() if expected else (InvalidTransition(FOO0, current, target),))
    assert split.current == {FOO0: current}


@pytest.mark.parametrize("pair", list(itertools.product(R, R)), ids=_ids)
def test_replica_transition(pair: tuple[ReplicaState, ReplicaState]) -> None:
    current, target = pair
    expected = pair in VALID_REPLICA_PAIRS
    replica = PartitionReplica(FOO0, 1)
    assert is_valid_replica_transition(current, target) is expected
    split = split_replica_transitions([replica], {replica: current}, target)
    assert split.valid == ((replica,) if expected else ())
    assert split.invalid == (() if expected else (InvalidTransition(replica, current, target),))


def test_tables_cover_every_state() -> None:
    assert set(VALID_PREVIOUS_PARTITION_STATES) == set(P)
    assert set(VALID_PREVIOUS_REPLICA_STATES) == set(R)


def test_state_names_are_kafkas() -> None:
    assert [str(s) for s in P] == ["NewPartition", "OnlinePartition", "OfflinePartition", "NonExistentPartition"]
    assert [str(s) for s in R] == [
        "NewReplica",
        "OnlineReplica",
        "OfflineReplica",
        "ReplicaDeletionStarted",
        "ReplicaDeletionSuccessful",
        "ReplicaDeletionIneligible",
        "NonExistentReplica",
    ]


def test_unknown_partition_is_non_existent_and_order_is_kept() -> None:
    a, b, c = TopicPartition("a", 0), TopicPartition("b", 1), TopicPartition("c", 2)
    split = split_partition_transitions([c, a, b], {a: P.ONLINE, b: P.OFFLINE}, P.NEW)
    assert split.valid == (c,)
    assert [t.key for t in split.invalid] == [a, b]
    assert split.current == {c: P.NON_EXISTENT, a: P.ONLINE, b: P.OFFLINE}


def test_unknown_replica_is_non_existent() -> None:
    replica = PartitionReplica(FOO0, 3)
    split = split_replica_transitions([replica], {}, R.NEW)
    assert split.valid == (replica,)
    assert split.current == {replica: R.NON_EXISTENT}


def test_invalid_partition_transition_reason() -> None:
    # ZkPartitionStateMachine.logInvalidTransition's IllegalStateException text
    (invalid,) = split_partition_transitions([FOO0], {}, P.ONLINE).invalid
    assert invalid.reason == (
        "Partition foo-0 should be in one of NewPartition,OnlinePartition,OfflinePartition states before "
        "moving to OnlinePartition state. Instead it is in NonExistentPartition state"
    )


def test_invalid_replica_transition_reason() -> None:
    # ZkReplicaStateMachine.logInvalidTransition's text ("in the ... states", no "one of")
    replica = PartitionReplica(FOO0, 1)
    (invalid,) = split_replica_transitions([replica], {replica: R.ONLINE}, R.DELETION_STARTED).invalid
    assert invalid.reason == (
        "Replica [Topic=foo,Partition=0,Replica=1] should be in the OfflineReplica states before moving to "
        "ReplicaDeletionStarted state. Instead it is in OnlineReplica state"
    )


def test_partition_replica_str() -> None:
    assert str(PartitionReplica(TopicPartition("foo", 0), 1)) == "[Topic=foo,Partition=0,Replica=1]"


def test_invalid_transitions_are_logged_as_kafka_logs_them() -> None:
    # the split's invalid entries carry what the state-change log needs, nothing more to look up
    log = ControllerLog(controller_id=0, epoch=1)
    (partition,) = split_partition_transitions([FOO0], {FOO0: P.ONLINE}, P.NEW).invalid
    entry = log.partition_state_change_failed(
        partition.key, partition.current, partition.target, ErrorTrace.illegal_state(partition.reason)
    )
    assert entry.message == (
        "[Controller id=0 epoch=1] Controller 0 epoch 1 failed to change state for partition foo-0 from "
        "OnlinePartition to NewPartition"
    )
    assert entry.error is not None
    assert entry.error.lines() == [
        "java.lang.IllegalStateException: Partition foo-0 should be in one of NonExistentPartition states before "
        "moving to NewPartition state. Instead it is in OnlinePartition state"
    ]
    replica = PartitionReplica(FOO0, 2)
    (invalid,) = split_replica_transitions([replica], {}, R.ONLINE).invalid
    entry = log.replica_state_change_failed(
        invalid.key.replica,
        invalid.key.partition,
        invalid.current,
        invalid.target,
        ErrorTrace.illegal_state(invalid.reason),
    )
    assert entry.message == (
        "[Controller id=0 epoch=1] Controller 0 epoch 1 initiated state change of replica 2 for partition foo-0 "
        "from NonExistentReplica to OnlineReplica failed"
    )

"""Partition reassignment decisions (reference §5.7, §5.8): entries of `/admin/reassign_partitions`,
completion, superseded replicas, the leader's move, and what stays in the znode."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkaops.cluster.common.errors import InvalidReplicaAssignmentError
from kafkaops.cluster.controller.context import ControllerContext
from kafkaops.cluster.controller.reassignment import (
    PARTITION_DOES_NOT_EXIST,
    UNKNOWN_SERVER_ERROR,
    ApiError,
    LeaderMove,
    completed_entries,
    format_failures,
    is_reassignment_complete,
    leader_move,
    plan_zk_reassignments,
    remaining_entries,
    unneeded_replicas,
    validate_replicas,
)
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition

FOO0 = TopicPartition("foo", 0)
FOO1 = TopicPartition("foo", 1)
BAR0 = TopicPartition("bar", 0)
LIVE = frozenset({0, 1, 2, 3})


def test_api_error_prints_as_kafka():
    assert str(PARTITION_DOES_NOT_EXIST) == (
        "ApiError(error=UNKNOWN_TOPIC_OR_PARTITION, message=The partition does not exist.)"
    )
    assert str(UNKNOWN_SERVER_ERROR) == "ApiError(error=UNKNOWN_SERVER_ERROR, message=null)"


@pytest.mark.parametrize(
    ("replicas", "message"),
    [
        ((), "Empty replica list specified in partition reassignment."),
        ((1, 2, 1), "Duplicate replica ids in partition reassignment replica list: List(1, 2, 1)"),
        ((1, -1), "Invalid broker id in replica list: List(1, -1)"),
        (
            (2, 7),
            "Replica assignment has brokers that are not alive. Replica list: List(2, 7), live broker list: "
            "Set(0, 1, 2, 3)",
        ),
    ],
)
def test_invalid_replica_lists(replicas, message):
    error = validate_replicas(replicas, ReplicaAssignment((0, 1)), LIVE)
    assert error == ApiError(InvalidReplicaAssignmentError, message)


def test_valid_replica_lists():
    assert validate_replicas((2, 3), ReplicaAssignment((0, 1)), LIVE) is None
    # a replica that stays may sit on a dead broker: only the replicas started must be live
    assert validate_replicas((2, 5), ReplicaAssignment((5, 1)), LIVE) is None


def test_adding_replica_that_died_during_the_reassignment_is_not_refused_again():
    moving = ReplicaAssignment((0, 1)).reassign_to((2, 3))
    assert validate_replicas((2, 3), moving, frozenset({0, 1, 2})) is None
    # but a new broker must be live
    assert validate_replicas((2, 3, 4), moving, frozenset({0, 1, 2, 3})) is not None


def plan(requested, assignments, deleting=(), live=LIVE, resume=False):
    return plan_zk_reassignments(
        requested,
        lambda tp: assignments.get(tp, ReplicaAssignment(())),
        lambda topic: topic in deleting,
        live,
        resume=resume,
    )


def test_plan_starts_valid_entries_with_reassign_to():
    result = plan({FOO0: (2, 3), FOO1: (1, 2)}, {FOO0: ReplicaAssignment((0, 1)), FOO1: ReplicaAssignment((0, 1))})
    assert result.to_start == {
        FOO0: ReplicaAssignment((2, 3, 0, 1), (2, 3), (0, 1)),
        FOO1: ReplicaAssignment((1, 2, 0), (2,), (0,)),
    }
    assert not result.failed and not result.unchanged


def test_plan_refuses_unknown_partitions_deleted_topics_and_bad_lists():
    result = plan(
        {BAR0: (1,), FOO0: (2, 3), FOO1: ()},
        {
            FOO0: ReplicaAssignment((0, 1)),
            FOO1: ReplicaAssignment((0, 1)),
            TopicPartition("gone", 0): ReplicaAssignment((0,)),
        },
    )
    assert result.failed[BAR0] == PARTITION_DOES_NOT_EXIST
    assert result.failed[FOO1].error is InvalidReplicaAssignmentError
    assert list(result.to_start) == [FOO0]
    deleting = plan({FOO0: (2, 3)}, {FOO0: ReplicaAssignment((0, 1))}, deleting={"foo"})
    assert deleting.failed == {FOO0: PARTITION_DOES_NOT_EXIST} and deleting.being_deleted == (FOO0,)


def test_plan_leaves_a_reassignment_under_way_alone_unless_resuming():
    moving = ReplicaAssignment((0, 1)).reassign_to((2, 3))
    again = plan({FOO0: (2, 3)}, {FOO0: moving})
    assert again.unchanged == (FOO0,) and not again.to_start
    assert plan({FOO0: (2, 3)}, {FOO0: moving}, resume=True).to_start == {FOO0: moving}


def test_an_entry_under_way_is_not_refused_when_its_topic_is_queued_for_deletion():
    moving = ReplicaAssignment((0, 1)).reassign_to((2, 3))
    result = plan({FOO0: (2, 3), FOO1: (2, 3)}, {FOO0: moving, FOO1: ReplicaAssignment((0, 1))}, deleting={"foo"})
    assert result.unchanged == (FOO0,) and result.failed == {FOO1: PARTITION_DOES_NOT_EXIST}
    # at failover Kafka refuses it (and resumes the reassignment from the topic znode)
    resumed = plan({FOO0: (2, 3)}, {FOO0: moving}, deleting={"foo"}, resume=True)
    assert resumed.failed == {FOO0: PARTITION_DOES_NOT_EXIST}


def test_plan_supersedes_and_cancels():
    moving = ReplicaAssignment((0, 1)).reassign_to((2, 3))
    superseded = plan({FOO0: (2, 1)}, {FOO0: moving}).to_start[FOO0]
    assert superseded == ReplicaAssignment((2, 1, 0), (2,), (0,))
    assert unneeded_replicas(moving, superseded) == (3,)
    cancelled = plan({FOO0: (0, 1)}, {FOO0: moving}).to_start[FOO0]
    assert cancelled == ReplicaAssignment((0, 1)) and not cancelled.is_being_reassigned
    assert unneeded_replicas(moving, cancelled) == (2, 3)


def test_a_target_equal_to_the_replicas_moves_nothing():
    same = plan({FOO0: (1, 0)}, {FOO0: ReplicaAssignment((0, 1))}).to_start[FOO0]
    assert same == ReplicaAssignment((1, 0))
    assert is_reassignment_complete(same, None)


def test_completion_needs_every_target_replica_in_the_isr():
    moving = ReplicaAssignment((0, 1)).reassign_to((2, 3))
    assert not is_reassignment_complete(moving, (0, 1, 2))
    assert is_reassignment_complete(moving, (0, 1, 3, 2))
    assert not is_reassignment_complete(moving, None)
    assert is_reassignment_complete(ReplicaAssignment((0, 1)), (0,))


@given(
    st.lists(st.integers(0, 6), min_size=1, max_size=4, unique=True),
    st.lists(st.integers(0, 6), min_size=1, max_size=4, unique=True),
    st.lists(st.integers(0, 6), min_size=1, max_size=4, unique=True),
)
def test_superseding_never_stops_a_replica_of_the_new_set(origin, first, second):
    moving = ReplicaAssignment(tuple(origin)).reassign_to(first)
    superseded = moving.reassign_to(second)
    assert set(superseded.original_replicas) == set(origin)  # the order may not survive (Kafka says so)
    stopped = unneeded_replicas(moving, superseded)
    assert not set(stopped) & set(superseded.replicas)
    assert set(stopped) <= set(first) - set(origin)  # only replicas the first reassignment was adding


@pytest.mark.parametrize(
    ("leader", "online", "move", "text"),
    [
        (0, True, LeaderMove.ELECT_NOT_IN_TARGET, "is not in the new list of replicas 2,3. Re-electing leader"),
        (2, True, LeaderMove.RESEND, "is already in the new list of replicas 2,3 and is alive"),
        (3, False, LeaderMove.ELECT_DEAD, "is already in the new list of replicas 2,3 but is dead"),
    ],
)
def test_leader_move(leader, online, move, text):
    completed = ReplicaAssignment((2, 3))
    assert leader_move(completed, leader, online) is move
    assert move.message(leader, FOO0, completed.replicas) == (
        f"Leader {leader} for partition foo-0 being reassigned, {text}"
    )


def test_finished_entries_leave_the_znode_only_when_they_asked_for_the_result():
    requested = {FOO0: (2, 3), FOO1: (1, 2), BAR0: (0,)}
    kept, removed = remaining_entries(requested, completed_entries({FOO0: ReplicaAssignment((2, 3))}))
    assert removed == [FOO0] and list(kept) == [FOO1, BAR0]
    # a newer entry for the partition (another target) stays, to be acted on
    kept, removed = remaining_entries(requested, completed_entries({FOO0: ReplicaAssignment((3, 2))}))
    assert removed == [] and kept == requested


def test_failures_print_as_a_scala_map():
    text = format_failures({FOO1: UNKNOWN_SERVER_ERROR, BAR0: PARTITION_DOES_NOT_EXIST})
    assert text == (
        "HashMap(bar-0 -> ApiError(error=UNKNOWN_TOPIC_OR_PARTITION, message=The partition does not exist.), "
        "foo-1 -> ApiError(error=UNKNOWN_SERVER_ERROR, message=null))"
    )


def test_deletion_of_a_topic_stays_halted_while_a_partition_moves():
    context = ControllerContext()
    context.set_all_topics(["foo"])
    context.update_partition_full_replica_assignment(FOO0, ReplicaAssignment((0, 1)).reassign_to((2, 3)))
    context.update_partition_full_replica_assignment(FOO1, ReplicaAssignment((0, 1)))
    context.partitions_being_reassigned.add(FOO0)
    context.queue_topic_deletion(["foo"])
    assert context.mark_topics_ineligible_for_deletion(["foo"]) == {"foo"}
    context.resume_deletion_for_topics(["foo"])  # e.g. a broker holding a replica came back
    assert not context.is_topic_eligible_for_deletion("foo")
    context.partitions_being_reassigned.discard(FOO0)
    context.resume_deletion_for_topics(["foo"])
    assert context.is_topic_eligible_for_deletion("foo")

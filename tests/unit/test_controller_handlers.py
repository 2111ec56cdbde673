"""Every controller event's handler against the in-memory fakes (no ZooKeeper, no brokers), and the
dispatch of each event by `KafkaController`. The state machines and topic deletion have their own files
(Kafka's test cases); this covers the handlers Kafka keeps in `KafkaController`."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest

from kafkaops.cluster.common import errors
from kafkaops.cluster.common.errors import (
    BrokerNotAvailableError,
    MalformedZNodeError,
    NotControllerError,
    StaleBrokerEpochError,
)
from kafkaops.cluster.controller.context import ControllerContext
from kafkaops.cluster.controller.context_loader import initialize_controller_context
from kafkaops.cluster.controller.controller import ControllerSettings, KafkaController
from kafkaops.cluster.controller.events import (
    AutoPreferredReplicaLeaderElection,
    BrokerChange,
    ControlledShutdown,
    ControllerEvent,
    Expire,
    IsrChangeNotification,
    LeaderAndIsrResponseReceived,
    LogDirEventNotification,
    PartitionModifications,
    PartitionReassignmentIsrChange,
    PreferredReplicaLeaderElection,
    Reelect,
    ReplicaLeaderElection,
    TopicChange,
    TopicDeletion,
    TopicDeletionStopReplicaResponseReceived,
    ZkPartitionReassignment,
    ZkWatchesLost,
)
from kafkaops.cluster.controller.state_machines import PartitionReplica, PartitionState, ReplicaState
from kafkaops.cluster.protocol.schemas import ElectionType
from kafkaops.cluster.zk.client import decode_partition_state
from kafkaops.cluster.zk.values import (
    NO_LEADER,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicAssignment,
    TopicPartition,
)
from tests.unit.controller_fakes import CONTROLLER_EPOCH, FakeControllerZk, Harness, broker, malformed

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def leader_of(h: Harness, tp: TopicPartition) -> LeaderAndIsr:
    state = h.zk.partition_states[tp]
    info = h.context.partition_leadership_info(tp)
    assert info == state  # the context keeps step with what was written
    return state.leader_and_isr


# --- the one decoding of a partition's state ---------------------------------------------------------------


def test_a_partition_state_decodes_in_one_place_and_malformed_bytes_are_a_typed_error() -> None:
    good = decode_partition_state(T0, b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":4,"isr":[1,2]}', 9)
    assert good == LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 4, (1, 2), 9), 3)
    for data in (b"", b"{", b"[]", b'{"leader":1}'):
        assert isinstance(decode_partition_state(T0, data, 0), MalformedZNodeError)


# --- brokers -----------------------------------------------------------------------------------------------


def test_broker_change_new_broker_gets_metadata_and_its_replicas_come_online() -> None:
    h = Harness()
    h.live_brokers(1)
    h.topic("t", {0: [1, 2]})
    h.context.put_replica_state(PartitionReplica(T0, 2), ReplicaState.OFFLINE)
    h.zk.brokers[2] = (broker(2), 7)
    h.handlers.broker_changes.process_broker_change()
    assert h.channel.added_brokers == [2] and h.context.live_broker_ids == {1, 2}
    assert h.channel.sent[0].update_metadata_brokers == {1, 2}
    assert h.context.replica_state(PartitionReplica(T0, 2)) is ReplicaState.ONLINE
    assert [(b, tp) for b, tp, _ in h.channel.leader_and_isr()] == [(2, T0)]


def test_broker_change_dead_broker_moves_leaders_and_leaves_isrs_in_one_batch() -> None:
    h = Harness()
    h.live_brokers(1, 2)
    h.topic("t", {0: [1, 2], 1: [2, 1]})
    del h.zk.brokers[1]
    h.handlers.broker_changes.process_broker_change()
    assert h.channel.removed_brokers == [1]
    assert len(h.channel.sent) == 1  # one request round for the whole failure
    assert leader_of(h, T0).leader == 2 and leader_of(h, T0).isr == (2,)
    assert leader_of(h, T1).leader == 2 and leader_of(h, T1).isr == (2,)
    assert h.context.replica_state(PartitionReplica(T0, 1)) is ReplicaState.OFFLINE
    assert h.context.partition_state(T0) is PartitionState.ONLINE


def test_broker_change_bounced_broker_fails_and_starts_again() -> None:
    h = Harness()
    h.live_brokers(1, 2)
    h.topic("t", {0: [1, 2]})
    h.zk.brokers[1] = (broker(1), 99)  # registered again: a newer epoch
    h.handlers.broker_changes.process_broker_change()
    assert h.channel.removed_brokers == [1] and h.channel.added_brokers == [1]
    assert h.context.broker_epoch(1) == 99
    assert h.context.replica_state(PartitionReplica(T0, 1)) is ReplicaState.ONLINE


def test_broker_change_ignores_an_unreadable_registration() -> None:
    h = Harness()
    h.live_brokers(1)
    h.zk.brokers[2] = malformed("/brokers/ids/2")
    h.handlers.broker_changes.process_broker_change()
    assert h.context.live_broker_ids == {1} and h.channel.added_brokers == []


def test_controlled_shutdown_moves_leadership_and_answers_what_the_broker_still_leads() -> None:
    h = Harness()
    h.live_brokers(1, 2)
    h.topic("t", {0: [1, 2], 1: [1], 2: [2, 1]})
    result: Future[set[TopicPartition]] = Future()
    h.handlers.broker_changes.process_controlled_shutdown(ControlledShutdown(1, 1, result))
    assert result.result(0) == {T1}  # a single-replica partition cannot move
    assert leader_of(h, T0).leader == 2
    assert 1 not in leader_of(h, T0).isr  # out of the ISR in the election's own write, as Kafka does
    assert [call for call in h.zk.calls if call[0] == "update_leader_and_isr"][0] == (
        "update_leader_and_isr",
        (((T0, leader_of(h, T0).with_zk_version(0)),), h.context.epoch),
    )
    # it led T0, so it is not an offline follower of it: it is told it follows now, and nothing more
    assert h.context.replica_state(PartitionReplica(T0, 1)) is ReplicaState.ONLINE
    assert sorted(b for b, tp, _ in h.channel.leader_and_isr() if tp == T0) == [1, 2]
    # it followed T2: told to stop fetching on its own, before the write that takes it out of that ISR
    t2 = TopicPartition("t", 2)
    election, stop, offline = h.channel.sent
    assert T0 in election.leader_and_isr[1] and not election.stop_replica
    assert stop.stop_replica == {1: {t2: False}} and not stop.leader_and_isr
    assert 1 not in leader_of(h, t2).isr and t2 in offline.leader_and_isr[2]
    assert h.context.replica_state(PartitionReplica(t2, 1)) is ReplicaState.OFFLINE
    assert h.context.shutting_down_broker_ids == {1}


def test_controlled_shutdown_of_an_unknown_broker_or_a_stale_epoch_is_refused() -> None:
    h = Harness()
    h.live_brokers(1, epoch=10)
    unknown: Future[set[TopicPartition]] = Future()
    h.handlers.broker_changes.process_controlled_shutdown(ControlledShutdown(7, 1, unknown))
    with pytest.raises(BrokerNotAvailableError):
        unknown.result(0)
    stale: Future[set[TopicPartition]] = Future()
    h.handlers.broker_changes.process_controlled_shutdown(ControlledShutdown(1, 9, stale))
    with pytest.raises(StaleBrokerEpochError):
        stale.result(0)
    assert h.context.shutting_down_broker_ids == set()


def test_log_dir_event_sends_leader_and_isr_for_the_brokers_replicas_and_deletes_the_notifications() -> None:
    h = Harness()
    h.live_brokers(1, 2)
    h.topic("t", {0: [1, 2], 1: [2, 1]})
    h.zk.log_dir_event_notifications = {"log_dir_event_0000000001": 2, "log_dir_event_0000000002": malformed("x")}
    h.handlers.broker_changes.process_log_dir_event_notification()
    assert sorted((b, tp) for b, tp, _ in h.channel.leader_and_isr()) == [(2, T0), (2, T1)]
    assert h.zk.log_dir_event_notifications == {}


def test_leader_and_isr_response_with_storage_errors_moves_the_replicas_offline() -> None:
    h = Harness()
    h.live_brokers(1, 2)
    h.topic("t", {0: [1, 2], 1: [2, 1]})
    code = errors.KafkaStorageError.code
    h.handlers.broker_changes.process_leader_and_isr_response(LeaderAndIsrResponseReceived(1, ((T0, code), (T1, 0))))
    assert h.context.replicas_on_offline_dirs == {1: {T0}}
    assert leader_of(h, T0).leader == 2 and leader_of(h, T0).isr == (2,)
    assert h.context.replica_state(PartitionReplica(T0, 1)) is ReplicaState.OFFLINE
    assert leader_of(h, T1).leader == 2  # untouched
    # the broker reports the replica back online
    h.handlers.broker_changes.process_leader_and_isr_response(LeaderAndIsrResponseReceived(1, ((T0, 0),)))
    assert h.context.replicas_on_offline_dirs == {}


# --- topics ------------------------------------------------------------------------------------------------


def test_topic_change_brings_a_new_topic_online_with_an_id() -> None:
    h = Harness()
    h.live_brokers(1, 2)
    h.zk.add_topic("t", {0: [1, 2], 1: [2, 1]})
    h.handlers.topic_changes.process_topic_change()
    assert h.watched_topics == ["t"]
    assert leader_of(h, T0) == LeaderAndIsr(1, 0, (1, 2), 0)
    assert leader_of(h, T1) == LeaderAndIsr(2, 0, (2, 1), 0)
    assert h.context.partition_state(T0) is PartitionState.ONLINE
    assert h.context.replica_state(PartitionReplica(T1, 1)) is ReplicaState.ONLINE
    assignment, _ = h.zk.topics["t"]
    assert isinstance(assignment, TopicAssignment) and assignment.topic_id == h.context.topic_ids["t"]
    assert {(b, tp, e.is_new) for b, tp, e in h.channel.leader_and_isr()} >= {(1, T0, True), (2, T0, True)}


def test_a_new_topic_keeps_the_id_written_at_its_creation() -> None:
    """A broker's CreateTopics writes the id with the assignment (Kafka 2.8); the controller takes it."""
    h = Harness()
    h.live_brokers(1)
    h.zk.add_topic("t", {0: [1]}, topic_id="id-t")
    _, version = h.zk.topics["t"]
    h.handlers.topic_changes.process_topic_change()
    assert h.context.topic_ids == {"t": "id-t"} and h.zk.topics["t"][1] == version  # not rewritten


def test_topic_change_forgets_a_deleted_topic() -> None:
    h = Harness()
    h.live_brokers(1)
    h.topic("gone", {0: [1]})
    h.zk.topics.clear()
    h.handlers.topic_changes.process_topic_change()
    assert h.context.all_topics == set() and h.context.partitions_for_topic("gone") == []


def test_a_malformed_new_topic_waits_for_its_repair_and_the_others_come_online() -> None:
    """Seen by one event together (a controller busy when they appear): Kafka 2.8 throws at "b" and never
    brings "a" online either."""
    h = Harness()
    h.live_brokers(1)
    h.zk.add_topic("a", {0: [1]})
    h.zk.topics["b"] = (malformed("/brokers/topics/b"), 0)
    h.handlers.topic_changes.process_topic_change()
    assert h.watched_topics == ["a", "b"]
    assert h.context.all_topics == {"a", "b"} and "b" not in h.context.topic_ids
    assert leader_of(h, TopicPartition("a", 0)) == LeaderAndIsr(1, 0, (1,), 0)
    assert h.context.partitions_for_topic("b") == []
    h.zk.add_topic("b", {0: [1]})  # repaired: its watch fires
    h.handlers.topic_changes.process_partition_modifications("b")
    assert leader_of(h, TopicPartition("b", 0)) == LeaderAndIsr(1, 0, (1,), 0)
    assert "b" in h.context.topic_ids


def test_partition_modifications_create_the_added_partitions() -> None:
    h = Harness()
    h.live_brokers(1, 2)
    h.topic("t", {0: [1, 2]})
    h.zk.add_topic("t", {0: [1, 2], 1: [2, 1]}, topic_id="id-t")
    h.handlers.topic_changes.process_partition_modifications("t")
    assert leader_of(h, T1).leader == 2
    assert h.context.partition_state(T1) is PartitionState.ONLINE


def test_partitions_added_to_a_topic_being_deleted_are_written_out_again() -> None:
    h = Harness()
    h.live_brokers(1)
    h.topic("t", {0: [1]})
    h.context.queue_topic_deletion(["t"])
    h.zk.add_topic("t", {0: [1], 1: [1]}, topic_id="id-t")
    h.handlers.topic_changes.process_partition_modifications("t")
    assignment, version = h.zk.topics["t"]
    assert isinstance(assignment, TopicAssignment) and set(assignment.partitions) == {0} and version == 1
    assert T1 not in h.zk.partition_states


def test_a_malformed_topic_znode_change_is_ignored() -> None:
    h = Harness()
    h.topic("t", {0: [1]})
    h.zk.topics["t"] = (malformed("/brokers/topics/t"), 3)
    h.handlers.topic_changes.process_partition_modifications("t")
    assert h.zk.names_called() == ["get_topic_znodes"] and h.channel.sent == []


def test_a_topic_id_is_kept_only_once_written() -> None:
    h = Harness()
    h.zk.add_topic("a", {0: [1]})
    h.zk.add_topic("b", {0: [1]})
    h.zk.topics["b"] = (h.zk.topics["b"][0], 5)
    original_get = h.zk.get_topic_znodes

    def racing_get(topics: Any) -> Any:  # b changes between the read and the write
        found = original_get(topics)
        if "b" in topics:
            found["b"] = (found["b"][0], 4)
        return found

    h.zk.get_topic_znodes = racing_get  # type: ignore[method-assign]
    h.handlers.topic_changes.assign_topic_ids(["a", "b"])
    assert set(h.context.topic_ids) == {"a"}


# --- ISR change notifications --------------------------------------------------------------------------


def test_isr_change_notification_refreshes_states_tells_every_broker_and_deletes_the_notifications() -> None:
    h = Harness()
    h.live_brokers(1, 2)
    h.topic("t", {0: [1, 2], 1: [2, 1]})
    shrunk = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 1, (1,), 1), CONTROLLER_EPOCH)
    h.zk.put_state(T0, shrunk)
    h.zk.unreadable_states[T1] = malformed("/brokers/topics/t/partitions/1/state")
    h.zk.isr_change_notifications = {
        "isr_change_0000000001": {T0, T1, TopicPartition("unknown", 0)},
        "isr_change_0000000002": malformed("x"),
    }
    h.handlers.isr_changes.process_isr_change_notification()
    assert h.context.partition_leadership_info(T0) == shrunk
    assert h.context.partition_leadership_info(T1) is not None  # unreadable: the known state stays
    [sent] = h.channel.sent
    assert sent.update_metadata_brokers == {1, 2} and sent.update_metadata_partitions == {T0, T1}
    assert h.zk.isr_change_notifications == {}
    assert ("get_topic_partition_states", ((T0, T1), True)) in h.zk.calls  # on the session


# --- elections asked for from outside ------------------------------------------------------------------


def test_preferred_replica_election_znode_elects_the_preferred_leaders_and_is_deleted() -> None:
    h = Harness()
    h.live_brokers(1, 2)
    h.topic("t", {0: [1, 2], 1: [2, 1]})
    h.zk.put_state(T0, LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 1, (1, 2), 1), CONTROLLER_EPOCH))
    h.context.put_partition_leadership_info(T0, h.zk.partition_states[T0])
    h.zk.preferred_election = {T0, T1, TopicPartition("unknown", 0)}
    h.handlers.replica_elections.process_preferred_replica_election()
    assert leader_of(h, T0).leader == 1
    assert [args[0] for name, args in h.zk.calls if name == "update_leader_and_isr"] == [
        ((T0, LeaderAndIsr(1, 2, (1, 2), 1)),)
    ]  # T1 already led by its preferred replica
    assert h.zk.preferred_election is None


def test_a_malformed_preferred_replica_election_znode_is_deleted() -> None:
    h = Harness()
    h.zk.preferred_election = malformed("/admin/preferred_replica_election")
    h.handlers.replica_elections.process_preferred_replica_election()
    assert h.zk.preferred_election is None and h.channel.sent == []


def test_elect_leaders_preferred_and_unclean() -> None:
    h = Harness()
    h.live_brokers(1, 2)
    h.topic("t", {0: [1, 2], 1: [2, 1], 2: [1, 2]})
    h.topic("doomed", {0: [1]})
    h.context.queue_topic_deletion(["doomed"])
    t2 = TopicPartition("t", 2)
    for tp, lai in ((T0, LeaderAndIsr(2, 1, (1, 2), 0)), (t2, LeaderAndIsr(2, 1, (2,), 0))):
        h.zk.put_state(tp, LeaderIsrAndControllerEpoch(lai, CONTROLLER_EPOCH))
        h.context.put_partition_leadership_info(tp, h.zk.partition_states[tp])
    elections = h.handlers.replica_elections
    results = elections.process_replica_leader_election(
        ElectionType.PREFERRED, [T0, T1, t2, TopicPartition("doomed", 0), TopicPartition("t", 9)]
    )
    assert results == {
        T0: (errors.NONE, None),
        T1: (errors.ElectionNotNeededError.code, None),
        t2: (
            errors.PreferredLeaderNotAvailableError.code,
            "Failed to elect leader for partition t-2 under strategy PreferredReplicaPartitionLeaderElectionStrategy",
        ),
        TopicPartition("doomed", 0): (errors.InvalidTopicError.code, "The topic is being deleted"),
        TopicPartition("t", 9): (errors.UnknownTopicOrPartitionError.code, "The partition does not exist."),
    }
    h.context.remove_live_brokers([2])  # t-2's only ISR member dies
    h.handlers.partition_state_machine.handle_state_changes([t2], PartitionState.OFFLINE)
    results = elections.process_replica_leader_election(ElectionType.UNCLEAN, [t2, T0])
    assert results == {t2: (errors.NONE, None), T0: (errors.ElectionNotNeededError.code, None)}
    assert leader_of(h, t2).leader == 1 and leader_of(h, t2).isr == (1,)


def test_auto_rebalance_moves_leaders_back_to_preferred_replicas_beyond_the_imbalance() -> None:
    h = Harness()
    h.live_brokers(1, 2)
    h.topic("t", {0: [1, 2], 1: [1, 2]})
    for tp in (T0, T1):
        state = LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 1, (1, 2), 0), CONTROLLER_EPOCH)
        h.zk.put_state(tp, state)
        h.context.put_partition_leadership_info(tp, state)
    h.handlers.replica_elections.check_and_trigger_auto_leader_rebalance()
    assert leader_of(h, T0).leader == 1 and leader_of(h, T1).leader == 1


def test_no_auto_rebalance_while_a_reassignment_is_in_progress() -> None:
    h = Harness()
    h.live_brokers(1, 2)
    h.topic("t", {0: [1, 2]})
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 1, (1, 2), 0), CONTROLLER_EPOCH)
    h.zk.put_state(T0, state)
    h.context.put_partition_leadership_info(T0, state)
    h.context.partitions_being_reassigned.add(TopicPartition("other", 0))
    h.handlers.replica_elections.check_and_trigger_auto_leader_rebalance()
    assert h.zk.calls == []


# --- partition reassignment ----------------------------------------------------------------------------


def test_reassignment_starts_then_completes_when_the_target_replicas_join_the_isr() -> None:
    h = Harness()
    h.live_brokers(1, 2, 3)
    h.topic("t", {0: [1, 2]})
    h.zk.reassignment = ({T0: (2, 3)}, 0)
    reassignments = h.handlers.reassignments
    started = reassignments.process_zk_partition_reassignment()
    assert started == {T0}
    # phase U: RS = TRS ++ ORS with AR/RR in ZooKeeper and memory
    moving = ReplicaAssignment((2, 3, 1), (3,), (1,))
    assert h.context.partition_full_replica_assignment(T0) == moving
    assignment, _ = h.zk.topics["t"]
    assert isinstance(assignment, TopicAssignment) and assignment.partitions[0] == moving
    # phase A: the leader epoch bumped, LeaderAndIsr to origin and adding replicas, AR → NewReplica
    assert leader_of(h, T0).leader_epoch == 1
    # A1 and A2 in one batch: the adding replica gets its isNew entry once (Kafka sends it twice, the
    # second with the epoch the broker already holds, which it ignores)
    assert len(h.channel.sent) == 1
    assert [(b, e.is_new) for b, _, e in h.channel.leader_and_isr()] == [(1, False), (2, False), (3, True)]
    assert h.context.replica_state(PartitionReplica(T0, 3)) is ReplicaState.NEW
    # the completion watch is set after the leader epoch write, so that write does not fire it
    names = h.zk.names_called()
    assert names.index("watch_topic_partition_states") > names.index("update_leader_and_isr")
    assert T0 in h.zk.watches

    h.zk.leader_writes(T0, LeaderAndIsr(1, 1, (1, 2, 3), 0))  # the new replica caught up
    assert h.isr_change_events == 1
    h.channel.sent.clear()
    reassignments.process_partition_reassignment_isr_change()
    # phase B: leader moved off the removed replica, RR stopped and deleted, RS = TRS, znode emptied
    assert leader_of(h, T0).leader == 2
    assert h.context.partition_full_replica_assignment(T0) == ReplicaAssignment((2, 3))
    assignment, _ = h.zk.topics["t"]
    assert isinstance(assignment, TopicAssignment) and assignment.partitions[0] == ReplicaAssignment((2, 3))
    assert PartitionReplica(T0, 1) not in h.context.replica_states
    assert h.zk.reassignment is None and h.context.partitions_being_reassigned == set()
    # B3 (leader moved, epoch 2), B4 (1 out of the ISR, epoch 3), B5 and B8 in one batch: the target
    # replicas get the final state once, the removed one a single StopReplica with delete
    assert leader_of(h, T0) == LeaderAndIsr(2, 3, (2, 3), leader_of(h, T0).zk_version)
    assert len(h.channel.sent) == 1
    assert [(b, e.state.leader_and_isr.leader_epoch) for b, _, e in h.channel.leader_and_isr()] == [(2, 3), (3, 3)]
    assert h.channel.stop_replica() == [(1, T0, True)]
    assert h.channel.sent[0].update_metadata_partitions == {T0}


def test_a_target_replica_that_joins_the_isr_while_the_reassignment_starts_completes_it() -> None:
    """The completion watch goes on after phase A's write: an ISR change between the first read and the
    watched read is seen by that read, not lost."""
    h = Harness()
    h.live_brokers(1, 2, 3)
    h.topic("t", {0: [1, 2]})
    h.zk.reassignment = ({T0: (2, 3)}, 0)
    watch = h.zk.watch_topic_partition_states

    def joined_meanwhile(partitions, on_change):  # type: ignore[no-untyped-def]
        current = h.zk.partition_states[T0].leader_and_isr
        h.zk.leader_writes(T0, LeaderAndIsr(current.leader, current.leader_epoch, (1, 2, 3), 0))
        return watch(partitions, on_change)

    h.zk.watch_topic_partition_states = joined_meanwhile  # type: ignore[method-assign]
    assert h.handlers.reassignments.process_zk_partition_reassignment() == {T0}
    assert h.context.partition_full_replica_assignment(T0) == ReplicaAssignment((2, 3))
    assert leader_of(h, T0).leader == 2
    assert h.zk.reassignment is None and h.context.partitions_being_reassigned == set()


def test_a_leader_write_racing_the_epoch_bump_is_read_again_on_the_writing_session() -> None:
    """Phase A bumps the epoch from the states just read; a leader's ISR write in between loses it the
    race (BADVERSION), and the retry reads on the session that writes (fresh), not the bulk connection."""
    h = Harness()
    h.live_brokers(1, 2, 3)
    h.topic("t", {0: [1, 2]})
    h.zk.reassignment = ({T0: (2, 3)}, 0)
    h.zk.concurrent_writes[T0] = LeaderAndIsr(1, 0, (1, 2), 0)
    assert h.handlers.reassignments.process_zk_partition_reassignment() == {T0}
    reads = [args for name, args in h.zk.calls if name == "get_topic_partition_states"]
    assert [fresh for _, fresh in reads] == [False, True]
    assert leader_of(h, T0).leader_epoch == 1


def test_reassignment_entries_that_cannot_start_are_removed_from_the_znode() -> None:
    h = Harness()
    h.live_brokers(1, 2)
    h.topic("t", {0: [1, 2]})
    h.zk.reassignment = ({T0: (2, 9), TopicPartition("t", 7): (1,)}, 4)
    assert h.handlers.reassignments.process_zk_partition_reassignment() == set()
    assert h.zk.reassignment is None
    assert h.context.partitions_being_reassigned == set()


def test_a_malformed_reassignment_znode_is_deleted() -> None:
    h = Harness()
    h.zk.reassignment = (malformed("/admin/reassign_partitions"), 2)
    assert h.handlers.reassignments.process_zk_partition_reassignment() == set()
    assert h.zk.reassignment is None


def test_a_reassignment_whose_state_znode_is_malformed_is_refused_not_treated_as_missing() -> None:
    h = Harness()
    h.live_brokers(1, 2, 3)
    h.topic("t", {0: [1, 2]})
    h.zk.unreadable_states[T0] = malformed("/brokers/topics/t/partitions/0/state")
    h.zk.reassignment = ({T0: (2, 3)}, 0)
    assert h.handlers.reassignments.process_zk_partition_reassignment() == set()
    assert h.zk.reassignment is None  # refused (UNKNOWN_SERVER_ERROR), so out of the znode


# --- failover's context load -----------------------------------------------------------------------------


def test_context_load_reads_brokers_topics_and_states_and_leaves_out_the_unreadable() -> None:
    zk = FakeControllerZk()
    zk.brokers = {1: (broker(1), 11), 2: malformed("/brokers/ids/2")}
    zk.add_topic("t", {0: [1, 2], 1: [2, 1]}, topic_id="id-t")
    zk.add_topic("moving", {0: ReplicaAssignment((1, 2), (2,), ())})
    zk.topics["bad"] = (malformed("/brokers/topics/bad"), 0)
    zk.put_state(T0, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1,), 5), 2))
    zk.unreadable_states[T1] = malformed("/brokers/topics/t/partitions/1/state")
    context = ControllerContext()
    watched: list[str] = []
    loaded = initialize_controller_context(context, zk, watched.extend)
    assert loaded == ["moving", "t"] and sorted(watched) == ["bad", "moving", "t"]
    assert context.live_broker_ids == {1} and context.broker_epoch(1) == 11
    # "bad" is known without partitions: its repaired znode's change creates them
    assert context.all_topics == {"bad", "moving", "t"} and context.topic_ids == {"t": "id-t"}
    assert context.partitions_for_topic("bad") == []
    assert context.partitions_being_reassigned == {TopicPartition("moving", 0)}
    assert context.partition_leadership_info(T0) == zk.partition_states[T0]
    assert context.partition_leadership_info(T1) is None


# --- dispatch --------------------------------------------------------------------------------------------


class _NoKazoo:
    """`KafkaController` builds its ZooKeeper client over this; the fakes answer every call made here."""


def dispatching_controller(h: Harness) -> KafkaController:
    controller = KafkaController(ControllerSettings(broker_id=5), _NoKazoo(), h.sink)  # type: ignore[arg-type]
    controller.handlers = h.handlers
    controller.context = h.context
    controller._active = True
    return controller


@pytest.mark.parametrize(
    ("event", "handled_by"),
    [
        (BrokerChange(), "broker_changes.process_broker_change"),
        (TopicChange(), "topic_changes.process_topic_change"),
        (PartitionModifications("t"), "topic_changes.process_partition_modifications"),
        (TopicDeletion(), "topic_deletion.process_topic_deletion"),
        (TopicDeletionStopReplicaResponseReceived(1, (), 0), "topic_deletion.process_stop_replica_response"),
        (IsrChangeNotification(), "isr_changes.process_isr_change_notification"),
        (PreferredReplicaLeaderElection(), "replica_elections.process_preferred_replica_election"),
        (LogDirEventNotification(), "broker_changes.process_log_dir_event_notification"),
        (LeaderAndIsrResponseReceived(1, ()), "broker_changes.process_leader_and_isr_response"),
        (ZkPartitionReassignment(), "reassignments.process_zk_partition_reassignment"),
        (PartitionReassignmentIsrChange(), "reassignments.process_partition_reassignment_isr_change"),
        (AutoPreferredReplicaLeaderElection(0), "replica_elections.check_and_trigger_auto_leader_rebalance"),
    ],
    ids=lambda value: type(value).__name__ if not isinstance(value, str) else "",
)
def test_each_event_of_an_active_controller_goes_to_its_handler(event: ControllerEvent, handled_by: str) -> None:
    h = Harness()
    controller = dispatching_controller(h)
    controller.events.schedule = lambda delay_s, event: None  # type: ignore[method-assign]
    component, method = handled_by.split(".")
    calls: list[tuple[Any, ...]] = []
    object.__setattr__(getattr(h.handlers, component), method, lambda *args: calls.append(args))
    controller._process(event)
    assert len(calls) == 1
    controller._active = False
    controller._process(event)
    assert len(calls) == 1  # an inactive controller acts on none of them


@pytest.mark.parametrize(
    ("states", "queued"),
    [
        (["SUSPENDED", "CONNECTED"], [ZkWatchesLost(0)]),  # the session lives on, its one-shot watches do not
        (["CONNECTED"], []),
        (["SUSPENDED", "LOST", "CONNECTED"], [Expire(), Reelect()]),  # a new session: the failover sets all
    ],
    ids=["connection-lost", "first-connection", "session-expired"],
)
def test_an_active_controller_sets_its_watches_again_after_a_lost_connection(states: list[str], queued: list[Any]):
    """kazoo drops every one-shot watch when a connection is lost (it sends no SetWatches on reconnect)."""
    controller = dispatching_controller(Harness())
    controller.active_controller_id = 5
    seen: list[Any] = []
    controller.events.put = seen.append  # type: ignore[method-assign]
    for state in states:
        if state == "LOST":
            controller.active_controller_id = None  # as the Expire it queues leaves it
        controller._session_state_changed(state)
    assert seen == queued


def test_watches_are_set_again_and_missed_changes_processed_after_a_lost_connection() -> None:
    h = Harness()
    controller = dispatching_controller(h)
    h.context.set_all_topics(["b", "a"])
    moving = TopicPartition("a", 0)
    h.context.partitions_being_reassigned.add(moving)
    calls: list[tuple[Any, ...]] = []
    controller._watch_topics = lambda topics: calls.append(("watch", list(topics)))  # type: ignore[method-assign]
    object.__setattr__(h.handlers.topic_changes, "process_partition_modifications", lambda t: calls.append(("mod", t)))
    object.__setattr__(
        h.handlers.reassignments, "maybe_complete_reassignments", lambda ps: calls.append(("complete", list(ps)))
    )
    controller._process(ZkWatchesLost(1))  # a resigned incarnation's event: nothing
    assert calls == []
    controller._process(ZkWatchesLost(0))
    assert calls == [("watch", ["a", "b"]), ("mod", "a"), ("mod", "b"), ("complete", [moving])]


def test_requests_that_answer_a_caller_say_not_controller_when_inactive() -> None:
    h = Harness()
    controller = dispatching_controller(h)
    controller._active = False
    shutdown: Future[set[TopicPartition]] = Future()
    controller._process(ControlledShutdown(1, 1, shutdown))
    with pytest.raises(NotControllerError):
        shutdown.result(0)
    election: Future[dict[TopicPartition, tuple[int, str | None]]] = Future()
    controller._process(ReplicaLeaderElection(ElectionType.PREFERRED, None, election))
    with pytest.raises(NotControllerError):
        election.result(0)


def test_controller_moved_makes_the_controller_resign_and_compete_again() -> None:
    h = Harness()
    h.live_brokers(1)
    h.topic("t", {0: [1]})
    h.context.put_partition_state(T0, PartitionState.OFFLINE)
    leaderless = LeaderIsrAndControllerEpoch(LeaderAndIsr(NO_LEADER, 0, (1,), 0), CONTROLLER_EPOCH)
    h.zk.put_state(T0, leaderless)
    h.context.put_partition_leadership_info(T0, leaderless)
    controller = dispatching_controller(h)
    h.zk.epoch_zk_version += 1  # a newer controller
    queued: list[ControllerEvent] = []
    controller.events.put = queued.append  # type: ignore[method-assign]
    election: Future[dict[TopicPartition, tuple[int, str | None]]] = Future()
    controller._process(ReplicaLeaderElection(ElectionType.UNCLEAN, (T0,), election))
    with pytest.raises(NotControllerError):
        election.result(0)
    assert not controller.is_active
    assert [type(e).__name__ for e in queued] == ["Reelect"]

"""The replica state machine against the in-memory fakes: Kafka 2.8's `ReplicaStateMachineTest`, case by
case (each test is named after Kafka's), then kafkaops' own cases.

Adapted where kafkaops differs from Kafka (each case says how): a replica going offline first leaves
the ISR as the controller's context knows it (ZooKeeper is read again only after a lost conditional
write), and a partition without a leader gets no UpdateMetadata of its own; a replica that reaches
NonExistentReplica keeps its place in the assignment (the assignment changes with the reassignment or
the topic's removal that deleted it).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkaops.cluster.controller.state_machines import PartitionReplica, ReplicaState
from kafkaops.cluster.state_change_log import Level
from kafkaops.cluster.zk.values import (
    NO_LEADER,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
)
from tests.unit.controller_fakes import CONTROLLER_EPOCH, Harness

BROKER_ID = 5
PARTITION = TopicPartition("t", 0)
REPLICA = PartitionReplica(PARTITION, BROKER_ID)
REPLICAS = [REPLICA]
R = ReplicaState


@pytest.fixture
def h() -> Harness:
    return Harness()


def state_of(h: Harness, replica: PartitionReplica = REPLICA) -> ReplicaState:
    return h.context.replica_state(replica)


def assign(h: Harness, replicas: list[int]) -> None:
    h.context.update_partition_full_replica_assignment(PARTITION, ReplicaAssignment(tuple(replicas)))


def lead(h: Harness, leader: int, isr: list[int]) -> LeaderIsrAndControllerEpoch:
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 0, tuple(isr), 0), CONTROLLER_EPOCH)
    h.context.put_partition_leadership_info(PARTITION, state)
    h.zk.put_state(PARTITION, state)
    return state


def invalid_transition(h: Harness, from_state: ReplicaState, to_state: ReplicaState) -> None:
    h.context.put_replica_state(REPLICA, from_state)
    h.handlers.replica_state_machine.handle_state_changes(REPLICAS, to_state)
    assert state_of(h) is from_state
    assert h.zk.calls == [] and h.channel.sent == []
    [failure] = h.sink.entries
    assert failure.message.endswith(f"from {from_state} to {to_state} failed")


# --- Kafka's ReplicaStateMachineTest -------------------------------------------------------------------


def test_startup_online_partition(h: Harness) -> None:
    h.live_brokers(BROKER_ID)
    assign(h, [BROKER_ID])
    assert REPLICA not in h.context.replica_states
    h.handlers.replica_state_machine.startup()
    assert state_of(h) is R.ONLINE


def test_startup_offline_partition(h: Harness) -> None:
    assign(h, [BROKER_ID])
    assert REPLICA not in h.context.replica_states
    h.handlers.replica_state_machine.startup()
    assert state_of(h) is R.OFFLINE


def test_startup_with_replica_without_leader(h: Harness) -> None:
    shutdown_broker = 100
    offline_replica = PartitionReplica(PARTITION, shutdown_broker)
    h.live_brokers(BROKER_ID)
    assign(h, [shutdown_broker])
    assert offline_replica not in h.context.replica_states
    h.handlers.replica_state_machine.startup()
    assert state_of(h, offline_replica) is R.OFFLINE


def test_nonexistent_replica_to_new_replica_transition(h: Harness) -> None:
    h.handlers.replica_state_machine.handle_state_changes(REPLICAS, R.NEW)
    assert state_of(h) is R.NEW


def test_invalid_nonexistent_replica_to_online_replica_transition(h: Harness) -> None:
    invalid_transition(h, R.NON_EXISTENT, R.ONLINE)


def test_invalid_nonexistent_replica_to_offline_replica_transition(h: Harness) -> None:
    invalid_transition(h, R.NON_EXISTENT, R.OFFLINE)


def test_invalid_nonexistent_replica_to_replica_deletion_started_transition(h: Harness) -> None:
    invalid_transition(h, R.NON_EXISTENT, R.DELETION_STARTED)


def test_invalid_nonexistent_replica_to_replica_deletion_ineligible_transition(h: Harness) -> None:
    invalid_transition(h, R.NON_EXISTENT, R.DELETION_INELIGIBLE)


def test_invalid_nonexistent_replica_to_replica_deletion_successful_transition(h: Harness) -> None:
    invalid_transition(h, R.NON_EXISTENT, R.DELETION_SUCCESSFUL)


def test_invalid_new_replica_to_nonexistent_replica_transition(h: Harness) -> None:
    invalid_transition(h, R.NEW, R.NON_EXISTENT)


def test_new_replica_to_online_replica_transition(h: Harness) -> None:
    h.context.put_replica_state(REPLICA, R.NEW)
    assign(h, [BROKER_ID])
    h.handlers.replica_state_machine.handle_state_changes(REPLICAS, R.ONLINE)
    assert state_of(h) is R.ONLINE
    assert h.channel.sent == []


def test_new_replica_to_offline_replica_transition(h: Harness) -> None:
    """Kafka also sends UpdateMetadata for the partition, which has no leader; kafkaops sends none."""
    h.live_brokers(BROKER_ID)
    h.context.put_replica_state(REPLICA, R.NEW)
    h.handlers.replica_state_machine.handle_state_changes(REPLICAS, R.OFFLINE)
    assert h.channel.stop_replica() == [(BROKER_ID, PARTITION, False)]
    assert state_of(h) is R.OFFLINE


def test_invalid_new_replica_to_replica_deletion_started_transition(h: Harness) -> None:
    invalid_transition(h, R.NEW, R.DELETION_STARTED)


def test_invalid_new_replica_to_replica_deletion_ineligible_transition(h: Harness) -> None:
    invalid_transition(h, R.NEW, R.DELETION_INELIGIBLE)


def test_invalid_new_replica_to_replica_deletion_successful_transition(h: Harness) -> None:
    invalid_transition(h, R.NEW, R.DELETION_SUCCESSFUL)


def test_invalid_online_replica_to_nonexistent_replica_transition(h: Harness) -> None:
    invalid_transition(h, R.ONLINE, R.NON_EXISTENT)


def test_invalid_online_replica_to_new_replica_transition(h: Harness) -> None:
    invalid_transition(h, R.ONLINE, R.NEW)


def test_online_replica_to_online_replica_transition(h: Harness) -> None:
    h.context.put_replica_state(REPLICA, R.ONLINE)
    assign(h, [BROKER_ID])
    state = lead(h, BROKER_ID, [BROKER_ID])
    h.handlers.replica_state_machine.handle_state_changes(REPLICAS, R.ONLINE)
    [(broker, tp, entry)] = h.channel.leader_and_isr()
    assert (broker, tp, entry.state, entry.assignment, entry.is_new) == (
        BROKER_ID,
        PARTITION,
        state,
        ReplicaAssignment((BROKER_ID,)),
        False,
    )
    assert h.zk.calls == []
    assert state_of(h) is R.ONLINE


def test_online_replica_to_offline_replica_transition(h: Harness) -> None:
    other = BROKER_ID + 1
    h.context.put_replica_state(REPLICA, R.ONLINE)
    assign(h, [BROKER_ID, other])
    state = lead(h, BROKER_ID, [BROKER_ID, other])
    h.handlers.replica_state_machine.handle_state_changes(REPLICAS, R.OFFLINE)
    adjusted = state.leader_and_isr.new_leader_and_isr(NO_LEADER, [other])
    updated = LeaderIsrAndControllerEpoch(adjusted.with_zk_version(adjusted.zk_version + 1), CONTROLLER_EPOCH)
    assert h.zk.calls == [("update_leader_and_isr", (((PARTITION, adjusted),), CONTROLLER_EPOCH))]
    assert h.channel.stop_replica() == [(BROKER_ID, PARTITION, False)]
    [(broker, _, entry)] = h.channel.leader_and_isr()
    assert (broker, entry.state, entry.assignment, entry.is_new) == (
        other,
        updated,
        ReplicaAssignment((BROKER_ID, other)),
        False,
    )
    assert h.context.partition_leadership_info(PARTITION) == updated
    assert state_of(h) is R.OFFLINE


def test_invalid_online_replica_to_replica_deletion_started_transition(h: Harness) -> None:
    invalid_transition(h, R.ONLINE, R.DELETION_STARTED)


def test_invalid_online_replica_to_replica_deletion_ineligible_transition(h: Harness) -> None:
    invalid_transition(h, R.ONLINE, R.DELETION_INELIGIBLE)


def test_invalid_online_replica_to_replica_deletion_successful_transition(h: Harness) -> None:
    invalid_transition(h, R.ONLINE, R.DELETION_SUCCESSFUL)


def test_invalid_offline_replica_to_nonexistent_replica_transition(h: Harness) -> None:
    invalid_transition(h, R.OFFLINE, R.NON_EXISTENT)


def test_invalid_offline_replica_to_new_replica_transition(h: Harness) -> None:
    invalid_transition(h, R.OFFLINE, R.NEW)


def test_offline_replica_to_online_replica_transition(h: Harness) -> None:
    h.context.put_replica_state(REPLICA, R.OFFLINE)
    assign(h, [BROKER_ID])
    state = lead(h, BROKER_ID, [BROKER_ID])
    h.handlers.replica_state_machine.handle_state_changes(REPLICAS, R.ONLINE)
    [(broker, _, entry)] = h.channel.leader_and_isr()
    assert (broker, entry.state, entry.is_new) == (BROKER_ID, state, False)
    assert state_of(h) is R.ONLINE


def test_offline_replica_to_replica_deletion_started_transition(h: Harness) -> None:
    h.context.put_replica_state(REPLICA, R.OFFLINE)
    h.handlers.replica_state_machine.handle_state_changes(REPLICAS, R.DELETION_STARTED)
    assert h.channel.stop_replica() == [(BROKER_ID, PARTITION, True)]
    assert state_of(h) is R.DELETION_STARTED


def test_offline_replica_to_replica_deletion_ineligible_transition(h: Harness) -> None:
    h.context.put_replica_state(REPLICA, R.OFFLINE)
    h.handlers.replica_state_machine.handle_state_changes(REPLICAS, R.DELETION_INELIGIBLE)
    assert state_of(h) is R.DELETION_INELIGIBLE


def test_invalid_offline_replica_to_replica_deletion_successful_transition(h: Harness) -> None:
    invalid_transition(h, R.OFFLINE, R.DELETION_SUCCESSFUL)


def test_invalid_replica_deletion_started_to_nonexistent_replica_transition(h: Harness) -> None:
    invalid_transition(h, R.DELETION_STARTED, R.NON_EXISTENT)


def test_invalid_replica_deletion_started_to_new_replica_transition(h: Harness) -> None:
    invalid_transition(h, R.DELETION_STARTED, R.NEW)


def test_invalid_replica_deletion_started_to_online_replica_transition(h: Harness) -> None:
    invalid_transition(h, R.DELETION_STARTED, R.ONLINE)


def test_invalid_replica_deletion_started_to_offline_replica_transition(h: Harness) -> None:
    invalid_transition(h, R.DELETION_STARTED, R.OFFLINE)


def test_replica_deletion_started_to_replica_deletion_ineligible_transition(h: Harness) -> None:
    h.context.put_replica_state(REPLICA, R.DELETION_STARTED)
    h.handlers.replica_state_machine.handle_state_changes(REPLICAS, R.DELETION_INELIGIBLE)
    assert state_of(h) is R.DELETION_INELIGIBLE


def test_replica_deletion_started_to_replica_deletion_successful_transition(h: Harness) -> None:
    h.context.put_replica_state(REPLICA, R.DELETION_STARTED)
    h.handlers.replica_state_machine.handle_state_changes(REPLICAS, R.DELETION_SUCCESSFUL)
    assert state_of(h) is R.DELETION_SUCCESSFUL


def test_replica_deletion_successful_to_nonexistent_replica_transition(h: Harness) -> None:
    """Kafka also drops the replica from the partition's assignment; kafkaops leaves that to whoever
    deleted it (the reassignment, or the topic's removal)."""
    h.context.put_replica_state(REPLICA, R.DELETION_SUCCESSFUL)
    assign(h, [BROKER_ID])
    h.handlers.replica_state_machine.handle_state_changes(REPLICAS, R.NON_EXISTENT)
    assert REPLICA not in h.context.replica_states
    assert h.context.partition_replica_assignment(PARTITION) == (BROKER_ID,)


def test_invalid_replica_deletion_successful_to_new_replica_transition(h: Harness) -> None:
    invalid_transition(h, R.DELETION_SUCCESSFUL, R.NEW)


def test_invalid_replica_deletion_successful_to_online_replica_transition(h: Harness) -> None:
    invalid_transition(h, R.DELETION_SUCCESSFUL, R.ONLINE)


def test_invalid_replica_deletion_successful_to_offline_replica_transition(h: Harness) -> None:
    invalid_transition(h, R.DELETION_SUCCESSFUL, R.OFFLINE)


def test_invalid_replica_deletion_successful_to_replica_deletion_started_transition(h: Harness) -> None:
    invalid_transition(h, R.DELETION_SUCCESSFUL, R.DELETION_STARTED)


def test_invalid_replica_deletion_successful_to_replica_deletion_ineligible_transition(h: Harness) -> None:
    invalid_transition(h, R.DELETION_SUCCESSFUL, R.DELETION_INELIGIBLE)


def test_invalid_replica_deletion_ineligible_to_nonexistent_replica_transition(h: Harness) -> None:
    invalid_transition(h, R.DELETION_INELIGIBLE, R.NON_EXISTENT)


def test_invalid_replica_deletion_ineligible_to_new_replica_transition(h: Harness) -> None:
    invalid_transition(h, R.DELETION_INELIGIBLE, R.NEW)


def test_replica_deletion_ineligible_to_online_replica_transition(h: Harness) -> None:
    h.context.put_replica_state(REPLICA, R.DELETION_INELIGIBLE)
    assign(h, [BROKER_ID])
    state = lead(h, BROKER_ID, [BROKER_ID])
    h.handlers.replica_state_machine.handle_state_changes(REPLICAS, R.ONLINE)
    [(broker, _, entry)] = h.channel.leader_and_isr()
    assert (broker, entry.state, entry.is_new) == (BROKER_ID, state, False)
    assert state_of(h) is R.ONLINE


def test_invalid_replica_deletion_ineligible_to_replica_deletion_started_transition(h: Harness) -> None:
    invalid_transition(h, R.DELETION_INELIGIBLE, R.DELETION_STARTED)


def test_invalid_replica_deletion_ineligible_to_replica_deletion_successful_transition(h: Harness) -> None:
    invalid_transition(h, R.DELETION_INELIGIBLE, R.DELETION_SUCCESSFUL)


# --- kafkaops' own cases ---------------------------------------------------------------------------------


def test_several_replicas_leave_one_isr_in_one_write_with_each_step_logged(h: Harness) -> None:
    """Kafka writes once per replica; one write here, with the same final state and Kafka's lines."""
    assign(h, [BROKER_ID, 6, 7])
    lead(h, BROKER_ID, [BROKER_ID, 6, 7])
    replicas = [PartitionReplica(PARTITION, b) for b in (BROKER_ID, 6)]
    for r in replicas:
        h.context.put_replica_state(r, R.ONLINE)
    h.handlers.replica_state_machine.handle_state_changes(replicas, R.OFFLINE)
    assert [name for name in h.zk.names_called()] == ["update_leader_and_isr"]
    written = h.zk.partition_states[PARTITION].leader_and_isr
    assert (written.leader, written.isr, written.leader_epoch) == (NO_LEADER, (7,), 2)
    removed = [m for m in h.sink.messages() if "from the ISR as part of transition to OfflineReplica" in m]
    assert [m.split(" state changed to ")[1].split(" after")[0] for m in removed] == [
        "(Leader:-1,ISR:6,7,LeaderEpoch:1,ControllerEpoch:50)",
        "(Leader:-1,ISR:7,LeaderEpoch:2,ControllerEpoch:50)",
    ]
    assert [b for b, _, _ in h.channel.leader_and_isr()] == [7]


def test_offline_replica_after_a_lost_race_reads_the_state_again(h: Harness) -> None:
    assign(h, [BROKER_ID, 6])
    lead(h, BROKER_ID, [BROKER_ID, 6])
    h.context.put_replica_state(REPLICA, R.ONLINE)
    h.zk.concurrent_writes[PARTITION] = LeaderAndIsr(BROKER_ID, 1, (BROKER_ID,), 0)  # the leader shrank the ISR
    h.handlers.replica_state_machine.handle_state_changes(REPLICAS, R.OFFLINE)
    reads = [args for name, args in h.zk.calls if name == "get_topic_partition_states"]
    assert reads == [((PARTITION,), True)]
    written = h.zk.partition_states[PARTITION].leader_and_isr
    assert (written.leader, written.isr) == (NO_LEADER, (BROKER_ID,))  # the last ISR member stays
    assert h.context.partition_leadership_info(PARTITION) == h.zk.partition_states[PARTITION]


def test_replicas_of_a_topic_being_deleted_leave_the_isr_without_leader_and_isr(h: Harness) -> None:
    assign(h, [BROKER_ID, 6])
    lead(h, BROKER_ID, [BROKER_ID, 6])
    h.context.put_replica_state(REPLICA, R.ONLINE)
    h.context.queue_topic_deletion(["t"])
    h.handlers.replica_state_machine.handle_state_changes(REPLICAS, R.OFFLINE)
    assert h.channel.leader_and_isr() == []
    assert h.channel.stop_replica() == [(BROKER_ID, PARTITION, False)]


def test_new_replica_requested_to_lead_is_refused_but_becomes_new(h: Harness) -> None:
    """As before issue 14 (Kafka leaves such a replica's state as it was)."""
    assign(h, [BROKER_ID])
    lead(h, BROKER_ID, [BROKER_ID])
    h.handlers.replica_state_machine.handle_state_changes(REPLICAS, R.NEW)
    [failure] = [e for e in h.sink.entries if e.level is Level.ERROR]
    assert failure.message.endswith("from NonExistentReplica to NewReplica failed")
    assert failure.error is not None
    assert "cannot be moved to NewReplica state as it is being requested to become leader" in "\n".join(
        failure.error.lines()
    )
    assert h.channel.sent == []
    assert state_of(h) is R.NEW


# --- failover's start-up in one pass ----------------------------------------------------------------

TOPICS = ("a", "b", "c")
BROKERS = range(5)

cluster_layouts = st.fixed_dictionaries(
    {
        "live": st.sets(st.sampled_from(BROKERS)),
        "partitions": st.lists(
            st.tuples(
                st.sampled_from(TOPICS),
                st.lists(st.sampled_from(BROKERS), min_size=1, max_size=3, unique=True),
                st.booleans(),  # has a leader in the context
            ),
            max_size=12,
        ),
        "deleting": st.sets(st.sampled_from(TOPICS)),
    }
)


def harness_for(layout: dict) -> Harness:  # type: ignore[type-arg]
    h = Harness()
    h.live_brokers(*sorted(layout["live"]))
    for index, (topic, replicas, led) in enumerate(layout["partitions"]):
        tp = TopicPartition(topic, index)
        h.context.update_partition_full_replica_assignment(tp, ReplicaAssignment(tuple(replicas)))
        if led:
            state = LeaderIsrAndControllerEpoch(LeaderAndIsr(replicas[0], 3, tuple(replicas), 2), CONTROLLER_EPOCH)
            h.context.put_partition_leadership_info(tp, state)
            h.zk.put_state(tp, state)
    h.context.queue_topic_deletion(layout["deleting"])
    return h


@settings(max_examples=200, deadline=None)
@given(cluster_layouts)
def test_startup_does_what_kafkas_passes_do(layout: dict) -> None:  # type: ignore[type-arg]
    """The one-pass start-up leaves the states, the batch, the ZooKeeper writes and the log lines that
    Kafka's order gives: every replica's state set first, then the online ones through
    handleStateChanges(OnlineReplica) and the offline ones (topics being deleted excepted) through
    handleStateChanges(OfflineReplica)."""
    fused, kafka = harness_for(layout), harness_for(layout)
    fused.handlers.replica_state_machine.startup(batch := fused.channel.new_batch())

    ctx = kafka.context
    replicas = [PartitionReplica(tp, r) for tp in ctx.all_partitions() for r in ctx.partition_replica_assignment(tp)]
    for replica in replicas:
        ctx.put_replica_state(replica, R.ONLINE if replica.replica in ctx.live_broker_ids else R.DELETION_INELIGIBLE)
    expected = kafka.channel.new_batch()
    machine = kafka.handlers.replica_state_machine
    machine.handle_state_changes([r for r in replicas if ctx.replica_state(r) is R.ONLINE], R.ONLINE, expected)
    offline = [
        r
        for r in replicas
        if ctx.replica_state(r) is R.DELETION_INELIGIBLE and not ctx.is_topic_queued_up_for_deletion(r.partition.topic)
    ]
    if offline:
        machine.handle_state_changes(offline, R.OFFLINE, expected)

    assert fused.context.replica_states == kafka.context.replica_states
    assert batch.leader_and_isr == expected.leader_and_isr
    assert batch.stop_replica == expected.stop_replica
    assert batch.update_metadata_partitions == expected.update_metadata_partitions
    assert fused.zk.partition_states == kafka.zk.partition_states
    assert fused.zk.calls == kafka.zk.calls
    assert fused.sink.entries == kafka.sink.entries
    assert fused.channel.sent == kafka.channel.sent == []


def test_startup_without_a_batch_sends_one(h: Harness) -> None:
    h.live_brokers(BROKER_ID)
    assign(h, [BROKER_ID, 6])
    lead(h, BROKER_ID, [BROKER_ID, 6])
    h.handlers.replica_state_machine.startup()
    [sent] = h.channel.sent
    assert list(sent.leader_and_isr) == [BROKER_ID]
    assert sent.stop_replica == {6: {PARTITION: False}}
    assert state_of(h, PartitionReplica(PARTITION, 6)) is R.OFFLINE

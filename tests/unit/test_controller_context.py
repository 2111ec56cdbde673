"""The controller context: brokers, assignments, leaders, states, deletion and election queues."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafkaops.cluster.controller.context import ControllerContext
from kafkaops.cluster.controller.state_machines import PartitionReplica, PartitionState, ReplicaState
from kafkaops.cluster.zk.values import (
    BrokerRegistration,
    EndPoint,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
)


def broker(broker_id: int, port: int = 9092) -> BrokerRegistration:
    return BrokerRegistration(broker_id, (EndPoint("PLAINTEXT", "127.0.0.1", port + broker_id),), 1000)


def state(leader: int, isr: tuple[int, ...], epoch: int = 0) -> LeaderIsrAndControllerEpoch:
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, epoch, isr, 0), 1)


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


def context_with(
    assignments: dict[TopicPartition, tuple[int, ...]], live: tuple[int, ...] = (1, 2, 3)
) -> ControllerContext:
    context = ControllerContext()
    context.set_live_brokers((broker(b), 100 + b) for b in live)
    context.set_all_topics(p.topic for p in assignments)
    for partition, replicas in assignments.items():
        context.update_partition_full_replica_assignment(partition, ReplicaAssignment(replicas))
        context.put_partition_leadership_info(partition, state(replicas[0], replicas))
    return context


def test_live_and_shutting_down_brokers() -> None:
    context = context_with({})
    context.shutting_down_broker_ids.add(2)
    assert context.live_broker_ids == {1, 3}
    assert context.live_or_shutting_down_broker_ids == {1, 2, 3}
    assert [b.broker_id for b in context.live_or_shutting_down_brokers] == [1, 2, 3]
    assert context.broker_epoch(2) == 102 and context.live_broker_epochs == {1: 101, 2: 102, 3: 103}
    context.remove_live_brokers([2, 9])
    assert context.live_or_shutting_down_broker_ids == {1, 3}
    assert context.live_broker(2) is None and context.broker_epoch(2) is None
    context.update_broker_registration(broker(3, port=19000))
    registration = context.live_broker(3)
    assert registration is not None and registration.endpoints[0].port == 19003
    assert context.broker_epoch(3) == 103
    context.add_live_brokers([(broker(2), 202)])  # a bounced broker comes back with a new epoch
    assert context.broker_epoch(2) == 202


def test_replica_online_rules() -> None:
    foo0 = tp("foo", 0)
    context = context_with({foo0: (1, 2, 3, 4)})
    context.shutting_down_broker_ids.add(2)
    context.replicas_on_offline_dirs[3] = {foo0}
    assert context.is_replica_online(1, foo0)
    assert not context.is_replica_online(2, foo0)
    assert context.is_replica_online(2, foo0, include_shutting_down=True)
    assert not context.is_replica_online(3, foo0)  # its log dir is offline
    assert context.is_replica_online(3, tp("foo", 1))
    assert not context.is_replica_online(4, foo0, include_shutting_down=True)  # not registered
    assert context.online_replicas(foo0) == {1}
    assert context.online_replicas(foo0, include_shutting_down=True) == {1, 2}


def test_assignments_and_broker_index() -> None:
    foo0, foo1, bar0 = tp("foo", 0), tp("foo", 1), tp("bar", 0)
    context = context_with({foo0: (1, 2), foo1: (2, 3), bar0: (3, 1)})
    assert context.partition_replica_assignment(foo0) == (1, 2)
    assert context.partition_replica_assignment(tp("nope", 0)) == ()
    assert context.partition_full_replica_assignment(tp("nope", 0)) == ReplicaAssignment(())
    assert sorted(context.all_partitions(), key=str) == [bar0, foo0, foo1]
    assert context.partitions_for_topic("foo") == [foo0, foo1]
    assert context.partition_replica_assignment_for_topic("foo") == {foo0: (1, 2), foo1: (2, 3)}
    assert context.partitions_on_broker(2) == {foo0, foo1}
    assert context.replicas_on_brokers([1]) == {PartitionReplica(foo0, 1), PartitionReplica(bar0, 1)}
    assert context.replicas_for_topic("bar") == {PartitionReplica(bar0, 3), PartitionReplica(bar0, 1)}
    assert context.replicas_for_partitions([foo1]) == {PartitionReplica(foo1, 2), PartitionReplica(foo1, 3)}
    # a reassignment in flight: RS = target + origin, then RS = target
    moving = ReplicaAssignment((1, 2)).reassign_to([4, 2])
    context.update_partition_full_replica_assignment(foo0, moving)
    assert context.partition_full_replica_assignment_for_topic("foo")[foo0] == moving
    assert context.partitions_on_broker(4) == {foo0} and foo0 in context.partitions_on_broker(1)
    context.update_partition_full_replica_assignment(foo0, ReplicaAssignment((4, 2)))
    assert foo0 not in context.partitions_on_broker(1)


def test_leaders_index_and_offline_leaders() -> None:
    a0, a1, a2, single, doomed = tp("a", 0), tp("a", 1), tp("a", 2), tp("s", 0), tp("d", 0)
    context = context_with({a0: (1, 2), a1: (2, 3), a2: (3, 1), single: (1,), doomed: (2, 1)})
    assert context.partitions_led_by(1) == {a0, single}
    assert context.partitions_led_by(1, replicated_only=True) == {a0}
    context.put_partition_leadership_info(a1, state(3, (3,), epoch=1))  # leadership moves
    assert context.partitions_led_by(2) == {doomed}
    assert context.partitions_led_by(3) == {a1, a2}
    context.queue_topic_deletion(["d"])
    assert context.partitions_led_by(2) == set()
    assert context.partitions_with_offline_leader() == set()
    context.remove_live_brokers([3])
    assert context.partitions_with_offline_leader() == {a1, a2}
    context.shutting_down_broker_ids.add(1)  # a shutting-down leader is not online either
    assert context.partitions_with_offline_leader() == {a0, a1, a2, single}
    context.shutting_down_broker_ids.clear()
    context.put_partition_leadership_info(a1, state(-1, (3,), epoch=2))
    context.replicas_on_offline_dirs[1] = {single}
    assert context.partitions_with_offline_leader() == {a1, a2, single}
    assert context.partitions_with_leaders() == {a0, a1, a2, single}
    assert context.partition_leadership_info(a1) == state(-1, (3,), epoch=2)
    assert set(context.partitions_leadership_info) == {a0, a1, a2, single, doomed}
    context.clear_partition_leadership_info()
    assert context.partitions_led_by(1) == set() and context.partitions_with_offline_leader() == set()


def test_partition_and_replica_states() -> None:
    foo0, foo1 = tp("foo", 0), tp("foo", 1)
    context = context_with({foo0: (1, 2), foo1: (2, 3)})
    assert context.partition_state(foo0) is PartitionState.NON_EXISTENT
    context.put_partition_state(foo0, PartitionState.ONLINE)
    context.put_partition_state(foo1, PartitionState.OFFLINE)
    assert context.partitions_in_states(PartitionState.OFFLINE) == {foo1}
    assert context.partitions_in_states(PartitionState.ONLINE, PartitionState.OFFLINE, topic="foo") == {foo0, foo1}
    assert context.partitions_in_states(PartitionState.NEW, topic="foo") == set()
    assert context.offline_partitions() == {foo1}
    context.begin_topic_deletion(["foo"])
    assert context.offline_partitions() == set()
    split = context.split_partition_transitions([foo0, foo1, tp("new", 0)], PartitionState.NEW)
    assert split.valid == (tp("new", 0),)
    assert [t.key for t in split.invalid] == [foo0, foo1]

    replicas = context.replicas_for_topic("foo")
    for replica in replicas:
        context.put_replica_state(replica, ReplicaState.ONLINE)
    assert context.are_all_replicas_in_state("foo", ReplicaState.ONLINE)
    context.put_replica_state(PartitionReplica(foo0, 1), ReplicaState.OFFLINE)
    assert context.is_any_replica_in_state("foo", ReplicaState.OFFLINE)
    assert not context.are_all_replicas_in_state("foo", ReplicaState.ONLINE)
    assert context.replicas_in_state("foo", ReplicaState.OFFLINE) == {PartitionReplica(foo0, 1)}
    split_replicas = context.split_replica_transitions(
        [PartitionReplica(foo0, 1), PartitionReplica(foo0, 2)], ReplicaState.DELETION_STARTED
    )
    assert split_replicas.valid == (PartitionReplica(foo0, 1),)
    context.remove_replica_state(PartitionReplica(foo0, 1))
    assert context.replica_state(PartitionReplica(foo0, 1)) is ReplicaState.NON_EXISTENT


def test_topic_deletion_bookkeeping_and_removal() -> None:
    foo0, bar0 = tp("foo", 0), tp("bar", 0)
    context = context_with({foo0: (1, 2), bar0: (2, 3)})
    context.topic_ids["foo"] = "id-foo"
    assert context.mark_topics_ineligible_for_deletion(["foo"]) == set()  # not queued: nothing to mark
    context.queue_topic_deletion(["foo"])
    assert context.is_topic_queued_up_for_deletion("foo") and context.is_topic_eligible_for_deletion("foo")
    assert context.mark_topics_ineligible_for_deletion(["foo", "bar"]) == {"foo"}
    assert not context.is_topic_eligible_for_deletion("foo")
    context.resume_deletion_for_topics(["foo"])
    assert context.is_topic_eligible_for_deletion("foo")
    context.begin_topic_deletion(["foo"])
    assert context.is_topic_deletion_in_progress("foo")
    context.put_partition_state(foo0, PartitionState.NON_EXISTENT)
    context.put_replica_state(PartitionReplica(foo0, 1), ReplicaState.DELETION_SUCCESSFUL)
    context.partitions_being_reassigned.add(foo0)
    context.queue_preferred_elections([foo0, bar0])

    context.remove_topic("foo")
    assert context.all_topics == {"bar"} and "foo" not in context.topic_ids
    assert not context.is_topic_queued_up_for_deletion("foo") and not context.is_topic_deletion_in_progress("foo")
    assert context.partitions_for_topic("foo") == [] and context.partition_leadership_info(foo0) is None
    assert context.partitions_on_broker(1) == set() and context.partitions_led_by(1) == set()
    assert foo0 not in context.partition_states and not context.replica_states
    assert not context.reassignment_in_progress
    assert context.pending_preferred_elections == (bar0,)


def test_preferred_election_queue() -> None:
    a, b, c = tp("t", 0), tp("t", 1), tp("t", 2)
    context = ControllerContext()
    context.queue_preferred_elections([b, a])
    context.queue_preferred_elections([a, c])
    assert context.pending_preferred_elections == (b, a, c)
    assert context.take_preferred_elections() == (b, a, c)
    assert context.pending_preferred_elections == ()


# --- the indexes agree with a scan of the whole context ------------------------------------------------

PARTITIONS = st.builds(tp, st.sampled_from(["a", "b", "c"]), st.integers(0, 3))
REPLICAS = st.lists(st.integers(0, 5), min_size=1, max_size=3, unique=True).map(tuple)
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("assign"), PARTITIONS, REPLICAS),
        st.tuples(st.just("lead"), PARTITIONS, st.integers(-1, 5)),
        st.tuples(st.just("remove"), st.sampled_from(["a", "b", "c"]), st.just(0)),
    ),
    max_size=40,
)


@given(OPERATIONS, st.sets(st.integers(0, 5)))
def test_indexes_match_a_full_scan(operations: list[tuple[str, object, object]], live: set[int]) -> None:
    context = ControllerContext()
    context.set_live_brokers((broker(b), b) for b in live)
    for kind, target, value in operations:
        if kind == "assign":
            assert isinstance(target, TopicPartition) and isinstance(value, tuple)
            context.update_partition_full_replica_assignment(target, ReplicaAssignment(value))
        elif kind == "lead":
            assert isinstance(target, TopicPartition) and isinstance(value, int)
            context.put_partition_leadership_info(target, state(value, (value,)))
        else:
            assert isinstance(target, str)
            context.remove_topic(target)
    for b in range(-1, 6):
        assert context.partitions_on_broker(b) == {
            p for p in context.all_partitions() if b in context.partition_replica_assignment(p)
        }
        assert context.partitions_led_by(b) == {
            p for p, s in context.partitions_leadership_info.items() if s.leader_and_isr.leader == b
        }
    assert context.partitions_with_offline_leader() == {
        p
        for p, s in context.partitions_leadership_info.items()
        if not context.is_replica_online(s.leader_and_isr.leader, p)
    }

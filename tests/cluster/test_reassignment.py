"""Partition reassignment through `/admin/reassign_partitions` (reference §5.7, §5.8), on real brokers
that really replicate: new replicas catch up from the leader, which widens the ISR in ZooKeeper.

To hold a reassignment half-way (to supersede it, cancel it, delete its topic or kill the controller
under it), a target broker is killed hard just before the reassignment is written: its registration
lives on for the session timeout, so the controller accepts it as a target, and it never catches up.
"""

from __future__ import annotations

import dataclasses
import time

from kafkaops.admin import topics as admin_topics
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import LeaderAndIsr, ReplicaAssignment, TopicPartition
from tests.cluster.clients_util import (
    Rec,
    assert_consumed_exactly,
    compare_replica_logs,
    kafka_python_consume,
    kafka_python_produce,
    log_dir,
    make_records,
)

RECORDS = 200


# --- helpers --------------------------------------------------------------------------------------------


def create(zk: KafkaZkClient, topic: str, assignment: dict[int, list[int]]) -> None:
    admin_topics.create_topic(zk, topic, None, None, assignment, {})
    wait_for(lambda: all(s is not None and s.leader >= 0 for s in states(zk, topic, len(assignment)).values()))


def states(zk: KafkaZkClient, topic: str, partitions: int) -> dict[int, LeaderAndIsr | None]:
    found = zk.get_partition_states(TopicPartition(topic, p) for p in range(partitions))
    return {tp.partition: (s.leader_and_isr if s else None) for tp, s in found.items()}


def state(zk: KafkaZkClient, topic: str, partition: int) -> LeaderAndIsr:
    current = states(zk, topic, partition + 1)[partition]
    assert current is not None
    return current


def assignment(zk: KafkaZkClient, topic: str) -> dict[int, ReplicaAssignment]:
    return zk.get_topic_assignments([topic])[topic].partitions


def write_reassignment(zk: KafkaZkClient, moves: dict[TopicPartition, list[int]]) -> None:
    """What the reassignment tool writes: a new znode, or the new content of the one there."""
    data = znodes.ReassignPartitionsZNode.encode(moves)
    path = znodes.ReassignPartitionsZNode.path()
    if zk.exists(path):
        zk.kazoo.set(path, data)
    else:
        zk.create(path, data)


def reassignment_entries(zk: KafkaZkClient) -> dict[TopicPartition, tuple[int, ...]] | None:
    entry = zk.get(znodes.ReassignPartitionsZNode.path())
    return None if entry is None else znodes.ReassignPartitionsZNode.decode(entry[0])


def wait_done(zk: KafkaZkClient, topic: str, expected: dict[int, tuple[int, ...]], timeout_s: float = 30.0) -> None:
    """The znode is gone and the topic znode holds exactly `expected`, nothing adding or removing."""

    def done() -> bool:
        if zk.exists(znodes.ReassignPartitionsZNode.path()):
            return False
        current = assignment(zk, topic)
        return all(current[p] == ReplicaAssignment(r) for p, r in expected.items())

    wait_for(done, timeout_s=timeout_s)


def produce(local: LocalCluster, topic: str, partitions: int, tag: str = "r") -> list[Rec]:
    bootstrap = local.status().brokers[0].endpoint.removeprefix("PLAINTEXT://")  # type: ignore[union-attr]
    records = [r for p in range(partitions) for r in make_records(p, RECORDS, tag)]
    outcome = kafka_python_produce(bootstrap, topic, records, acks="all")
    assert not outcome.errors, outcome.errors[:3]
    return outcome.acked


def consume_from(local: LocalCluster, broker_id: int, topic: str, partitions: int) -> list[Rec]:
    endpoint = next(b.endpoint for b in local.status().brokers if b.broker_id == broker_id)
    assert endpoint is not None
    expect = {p: RECORDS for p in range(partitions)}
    return kafka_python_consume(endpoint.removeprefix("PLAINTEXT://"), topic, range(partitions), expect=expect)


def controller_and_others(local: LocalCluster) -> tuple[int, list[int]]:
    controller = local.status().controller_id
    assert controller is not None
    return controller, [b for b in local.broker_ids() if b != controller]


def hold_with_dead_target(local: LocalCluster, zk: KafkaZkClient, victim: int) -> None:
    """Kill `victim` hard: the controller keeps it live until its session expires (6 s)."""
    local.stop_broker(victim, hard=True)
    assert zk.exists(znodes.BrokerIdZNode.path(victim))


def state_change_log(local: LocalCluster, broker_id: int) -> str:
    return (local.broker_dir(broker_id) / "logs" / "state-change.log").read_text()


def server_log(local: LocalCluster, broker_id: int) -> str:
    return (local.broker_dir(broker_id) / "logs" / "server.out").read_text(errors="replace")


# --- tests ----------------------------------------------------------------------------------------------


def test_move_partitions_with_data_to_new_brokers(cluster, zk):
    local = cluster(brokers=4)
    create(zk, "moving", {0: [0, 1], 1: [1, 0]})
    produced = produce(local, "moving", 2)
    before = states(zk, "moving", 2)
    write_reassignment(zk, {TopicPartition("moving", 0): [2, 3], TopicPartition("moving", 1): [3, 2]})
    wait_done(zk, "moving", {0: (2, 3), 1: (3, 2)})

    after = states(zk, "moving", 2)
    for p, target in ((0, (2, 3)), (1, (3, 2))):
        lai = after[p]
        assert lai is not None and before[p] is not None
        # the leader was not in the target: the first target replica in the ISR leads now
        assert lai.leader == target[0] and set(lai.isr) == set(target)
        assert lai.leader_epoch > before[p].leader_epoch
    # the new replicas caught up by replicating: same batches, byte for byte, and every record is there
    for p in (0, 1):
        wait_for(lambda p=p: compare_replica_logs(local, "moving", p, [2, 3]) is None)
    assert_consumed_exactly(produced, consume_from(local, 2, "moving", 2))
    # the removed replicas were stopped and deleted (StopReplica delete=true)
    for broker in (0, 1):
        for p in (0, 1):
            wait_for(lambda b=broker, p=p: not log_dir(local, b, "moving", p).exists())

    controller = local.status().controller_id
    assert controller is not None
    text = state_change_log(local, controller)
    assert (
        "with new replica assignment ReplicaAssignment(replicas=2,3,0,1, addingReplicas=2,3, removingReplicas=0,1) "
        "to leader 0 for partition being reassigned moving-0 (state.change.logger)" in text
    )
    assert "] INFO [Controller id=" in text and "Sent LeaderAndIsr request (Leader:0,ISR:0,1,LeaderEpoch:1," in text
    assert "Changed partition moving-0 from OnlinePartition to OnlinePartition with state LeaderAndIsr(leader=2" in text


def test_leader_in_target_stays_and_a_removed_follower_goes(cluster, zk):
    local = cluster(brokers=3)
    create(zk, "stay", {0: [0, 1]})
    produced = produce(local, "stay", 1)
    before = state(zk, "stay", 0)
    write_reassignment(zk, {TopicPartition("stay", 0): [0, 2]})
    wait_done(zk, "stay", {0: (0, 2)})
    after = state(zk, "stay", 0)
    assert after.leader == 0 == before.leader and set(after.isr) == {0, 2}
    assert after.leader_epoch >= before.leader_epoch + 2  # phase A, then the final replica set
    wait_for(lambda: not log_dir(local, 1, "stay", 0).exists())
    assert_consumed_exactly(produced, consume_from(local, 2, "stay", 1))


def test_target_equal_to_the_replicas_completes_at_once(cluster, zk):
    cluster(brokers=2)
    create(zk, "same", {0: [0, 1]})
    write_reassignment(zk, {TopicPartition("same", 0): [1, 0]})
    wait_done(zk, "same", {0: (1, 0)}, timeout_s=10)
    assert set(state(zk, "same", 0).isr) == {0, 1}


def test_superseding_reassignment_stops_the_replica_no_longer_wanted(cluster, zk):
    local = cluster(brokers=4)
    controller, (a, b, c) = controller_and_others(local)
    create(zk, "super", {0: [a, b]})
    produced = produce(local, "super", 1)
    tp = TopicPartition("super", 0)
    hold_with_dead_target(local, zk, c)
    write_reassignment(zk, {tp: [c, controller]})
    # phase A: the controller's replica catches up, the dead one never does
    wait_for(lambda: assignment(zk, "super")[0] == ReplicaAssignment((c, controller, a, b), (c, controller), (a, b)))
    wait_for(lambda: controller in state(zk, "super", 0).isr)
    assert zk.exists(znodes.ReassignPartitionsZNode.path())

    write_reassignment(zk, {tp: [controller, a]})  # supersedes: c is no longer wanted, b goes
    wait_done(zk, "super", {0: (controller, a)})
    assert set(state(zk, "super", 0).isr) == {controller, a}
    wait_for(lambda: not log_dir(local, b, "super", 0).exists())
    assert_consumed_exactly(produced, consume_from(local, controller, "super", 1))


def test_cancel_returns_to_the_original_replicas(cluster, zk):
    local = cluster(brokers=4)
    controller, (a, b, c) = controller_and_others(local)
    create(zk, "cancel", {0: [a, b]})
    produced = produce(local, "cancel", 1)
    tp = TopicPartition("cancel", 0)
    hold_with_dead_target(local, zk, c)
    write_reassignment(zk, {tp: [c, b]})
    wait_for(lambda: assignment(zk, "cancel")[0] == ReplicaAssignment((c, b, a), (c,), (a,)))
    held = state(zk, "cancel", 0)
    assert c not in held.isr

    write_reassignment(zk, {tp: [a, b]})  # back to the origin (RS - AR): the adding replica is stopped
    wait_done(zk, "cancel", {0: (a, b)}, timeout_s=10)
    after = state(zk, "cancel", 0)
    assert after.leader in (a, b) and set(after.isr) == {a, b} and after.leader_epoch > held.leader_epoch
    assert_consumed_exactly(produced, consume_from(local, a, "cancel", 1))


def test_controller_killed_mid_reassignment_the_next_one_completes_it(cluster, zk):
    local = cluster(brokers=4)
    first, (a, b, c) = controller_and_others(local)
    create(zk, "failover", {0: [a, first], 1: [first, a]})
    produced = produce(local, "failover", 2)
    hold_with_dead_target(local, zk, c)
    write_reassignment(zk, {TopicPartition("failover", 0): [b, c], TopicPartition("failover", 1): [c, b]})
    wait_for(lambda: all(r.adding_replicas for r in assignment(zk, "failover").values()))

    local.stop_broker(first, hard=True)  # phase A, with both partitions waiting for c
    status = local.wait_until(lambda s: s.controller_id not in (None, first), 20)
    assert status.controller_epoch == 2
    # the new controller resumed from the topic znode and the reassignment znode: still moving
    assert assignment(zk, "failover")[0].adding_replicas == (b, c)
    wait_for(lambda: not zk.exists(znodes.BrokerIdZNode.path(c)), timeout_s=15)
    local.start_broker(c)  # the missing target replica returns and catches up
    wait_done(zk, "failover", {0: (b, c), 1: (c, b)}, timeout_s=40)
    for p in (0, 1):
        lai = state(zk, "failover", p)
        assert lai.leader in (b, c) and set(lai.isr) == {b, c}
        wait_for(lambda p=p: compare_replica_logs(local, "failover", p, [b, c]) is None)
    assert_consumed_exactly(produced, consume_from(local, b, "failover", 2))
    assert "for partition being reassigned failover-0" in state_change_log(local, status.controller_id)
    assert not log_dir(local, a, "failover", 0).exists()


def test_failover_resumes_from_the_topic_znode_and_from_a_znode_written_meanwhile(cluster, zk):
    local = cluster(brokers=4)
    first, (a, b, c) = controller_and_others(local)
    create(zk, "phaseb", {0: [a, b, c]})
    create(zk, "orphan", {0: [a, b]})
    wait_for(lambda: len(state(zk, "phaseb", 0).isr) == 3)
    # as a controller leaves it when it dies in phase B: the topic znode still lists the replica being
    # removed, the target replicas are all in the ISR
    current, version = zk.get_topic_assignment_versioned("phaseb")  # type: ignore[misc]
    moving = dataclasses.replace(current, partitions={0: ReplicaAssignment((a, b, c), (), (c,))})
    zk.set_topic_assignment("phaseb", moving, version)

    local.stop_broker(first, hard=True)
    # written while no controller acts: the next one finds it at failover
    write_reassignment(zk, {TopicPartition("orphan", 0): [b, c]})
    status = local.wait_until(lambda s: s.controller_id not in (None, first), 20)
    wait_done(zk, "phaseb", {0: (a, b)})
    wait_done(zk, "orphan", {0: (b, c)})
    assert set(state(zk, "phaseb", 0).isr) == {a, b} and set(state(zk, "orphan", 0).isr) == {b, c}
    wait_for(lambda: not log_dir(local, c, "phaseb", 0).exists())
    wait_for(lambda: not log_dir(local, a, "orphan", 0).exists())
    assert status.controller_epoch == 2


def test_invalid_entries_are_removed_and_a_malformed_znode_deleted(cluster, zk):
    local = cluster(brokers=3)
    create(zk, "valid", {0: [0, 1], 1: [0, 1], 2: [1, 0]})
    write_reassignment(
        zk,
        {
            TopicPartition("valid", 9): [0, 1],  # no such partition
            TopicPartition("nosuch", 0): [0],  # no such topic
            TopicPartition("valid", 1): [],  # empty replica list
            TopicPartition("valid", 2): [1, 7],  # broker 7 does not exist
            TopicPartition("valid", 0): [1, 2],
        },
    )
    wait_done(zk, "valid", {0: (1, 2), 1: (0, 1), 2: (1, 0)})
    assert set(state(zk, "valid", 1).isr) == {0, 1}  # untouched
    controller = local.status().controller_id
    assert controller is not None
    text = server_log(local, controller)
    assert "Failed reassignment through zk with the following errors: HashMap(nosuch-0 -> ApiError(" in text
    assert "valid-1 -> ApiError(error=INVALID_REPLICA_ASSIGNMENT, message=Empty replica list specified" in text
    assert "valid-9 -> ApiError(error=UNKNOWN_TOPIC_OR_PARTITION, message=The partition does not exist.)" in text
    assert "Replica assignment has brokers that are not alive. Replica list: List(7)" in text

    zk.create(znodes.ReassignPartitionsZNode.path(), b"{not json")
    wait_for(lambda: not zk.exists(znodes.ReassignPartitionsZNode.path()))
    assert "Ignoring partition reassignment due to invalid json" in server_log(local, controller)
    zk.create(znodes.ReassignPartitionsZNode.path(), b'{"version":1,"partitions":[]}')
    wait_for(lambda: not zk.exists(znodes.ReassignPartitionsZNode.path()))
    # the controller still works
    write_reassignment(zk, {TopicPartition("valid", 1): [2, 1]})
    wait_done(zk, "valid", {1: (2, 1)})


def test_topic_deletion_waits_for_the_reassignment(cluster, zk):
    local = cluster(brokers=4)
    controller, (a, b, c) = controller_and_others(local)
    create(zk, "held", {0: [a, b], 1: [a, b]})
    hold_with_dead_target(local, zk, c)
    tp0, tp1 = TopicPartition("held", 0), TopicPartition("held", 1)
    write_reassignment(zk, {tp0: [c, a]})
    wait_for(lambda: assignment(zk, "held")[0].adding_replicas == (c,))

    admin_topics.delete_topics(zk, "held")
    time.sleep(2)
    assert zk.exists(znodes.TopicZNode.path("held")) and zk.exists(znodes.DeleteTopicsTopicZNode.path("held"))
    # a new reassignment of a topic queued for deletion is refused; the one under way goes on
    write_reassignment(zk, {tp0: [c, a], tp1: [b, a]})
    wait_for(lambda: reassignment_entries(zk) == {tp0: (c, a)})
    assert assignment(zk, "held")[1] == ReplicaAssignment((a, b))

    wait_for(lambda: not zk.exists(znodes.BrokerIdZNode.path(c)), timeout_s=15)
    local.start_broker(c)
    wait_for(lambda: not zk.exists(znodes.ReassignPartitionsZNode.path()), timeout_s=30)
    wait_for(lambda: not zk.exists(znodes.TopicZNode.path("held")), timeout_s=30)
    wait_for(lambda: not zk.exists(znodes.DeleteTopicsTopicZNode.path("held")))  # removed last
    text = server_log(local, controller)
    assert "Skipping reassignment of held-1 since the topic is currently being deleted" in text
    # the deletion began only once the partition had moved
    moved = text.index(f"Successfully updated assignment of partition held-0 to ReplicaAssignment(replicas={c},{a}, ")
    assert moved < text.index("Deletion of topic held successfully completed")

"""The local cluster's pure rules: which partitions keep a broker from being removed."""

from __future__ import annotations

from kafkaops.cluster.local.cluster import replicas_held
from kafkaops.cluster.local.zookeeper import free_port, free_ports, listen_port_candidates, zookeeper_answers
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicAssignment, TopicPartition


def test_a_broker_holds_its_replicas_and_those_a_reassignment_adds() -> None:
    assignments = {
        "b": TopicAssignment({1: ReplicaAssignment((0, 1)), 0: ReplicaAssignment((1, 2))}),
        "a": TopicAssignment({0: ReplicaAssignment((0, 3, 1), adding_replicas=(3,), removing_replicas=(1,))}),
        "c": TopicAssignment({0: ReplicaAssignment((1, 2))}),
    }
    assert replicas_held(3, assignments) == [TopicPartition("a", 0)]
    assert replicas_held(0, assignments) == [TopicPartition("a", 0), TopicPartition("b", 1)]
    assert replicas_held(1, assignments) == [
        TopicPartition("a", 0),
        TopicPartition("b", 0),
        TopicPartition("b", 1),
        TopicPartition("c", 0),
    ]
    assert replicas_held(9, assignments) == []


def test_nobody_answers_on_a_free_port() -> None:
    assert not zookeeper_answers(f"127.0.0.1:{free_port()},127.0.0.1:{free_port()}/chroot")
    assert not zookeeper_answers("no-port-here")


def test_listen_ports_are_outside_the_ephemeral_range() -> None:
    candidates = listen_port_candidates((32768, 60999))
    assert candidates[0] == 20000 and candidates[-1] == 65535
    assert not [port for port in candidates if 32768 <= port <= 60999]
    assert len(set(free_ports(20))) == 20

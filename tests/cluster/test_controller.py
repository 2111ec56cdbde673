"""Brokers and the controller against a real ZooKeeper and real broker processes (reference §5)."""

from __future__ import annotations

import json
import time

import pytest

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.values import TopicPartition


def states(zk, topic, partitions):
    found = zk.get_partition_states(TopicPartition(topic, p) for p in range(partitions))
    return {tp.partition: (s.leader_and_isr if s else None) for tp, s in found.items()}


def all_led(zk, topic, partitions, live):
    current = states(zk, topic, partitions)
    return all(s is not None and s.leader in live for s in current.values()) and current


def test_startup_registration_and_election(cluster, zk):
    local = cluster(brokers=3)
    status = local.status()
    assert status.controller_epoch == 1 and status.controller_id in (0, 1, 2)
    registration = json.loads(zk.get(znodes.BrokerIdZNode.path(0))[0])
    assert list(registration) == [
        "listener_security_protocol_map",
        "endpoints",
        "jmx_port",
        "features",
        "host",
        "timestamp",
        "port",
        "version",
    ]
    assert registration["version"] == 5 and registration["endpoints"][0].startswith("PLAINTEXT://127.0.0.1:")
    assert len(znodes.ClusterIdZNode.decode(zk.get("/cluster/id")[0])) == 22
    controller = json.loads(zk.get("/controller")[0])
    assert controller["brokerid"] == status.controller_id


def test_topic_creation_gives_leaders_and_isr(cluster, zk):
    cluster(brokers=3)
    admin_topics.create_topic(zk, "orders", 6, 3, None, {}, rng=JavaRandom(3))
    current = wait_for(lambda: all_led(zk, "orders", 6, {0, 1, 2}))
    assignment = zk.get_topic_assignments(["orders"])["orders"]
    for partition, lai in current.items():
        replicas = assignment.partitions[partition].replicas
        assert lai.leader == replicas[0] and lai.isr == replicas and lai.leader_epoch == 0
    assert assignment.topic_id is not None  # the controller adds Kafka 2.8's topic id


def test_hard_kill_moves_leadership_to_isr(cluster, zk):
    local = cluster(brokers=3)
    controller = local.status().controller_id
    victim = next(b for b in (0, 1, 2) if b != controller)
    admin_topics.create_topic(zk, "t", 6, 2, None, {}, rng=JavaRandom(1))
    wait_for(lambda: all_led(zk, "t", 6, {0, 1, 2}))
    started = time.monotonic()
    local.stop_broker(victim, hard=True)
    survivors = {0, 1, 2} - {victim}
    wait_for(lambda: all_led(zk, "t", 6, survivors), timeout_s=15)
    assert time.monotonic() - started < 14  # session timeout 6 s + election
    # then the dead replicas leave the ISR of the partitions they followed (OfflineReplica)
    wait_for(lambda: all(victim not in lai.isr for lai in states(zk, "t", 6).values()), timeout_s=5)


def test_controlled_shutdown_moves_leadership_before_exit(cluster, zk):
    local = cluster(brokers=3)
    admin_topics.create_topic(zk, "c", 6, 3, None, {}, rng=JavaRandom(2))
    wait_for(lambda: all_led(zk, "c", 6, {0, 1, 2}))
    local.stop_broker(1)  # SIGTERM: returns once the process has exited
    current = states(zk, "c", 6)
    assert all(lai.leader != 1 and 1 not in lai.isr for lai in current.values())
    assert not zk.exists(znodes.BrokerIdZNode.path(1))


def test_controller_failover_bumps_epoch_and_resumes(cluster, zk):
    local = cluster(brokers=3)
    first = local.status()
    admin_topics.create_topic(zk, "f", 3, 3, None, {}, rng=JavaRandom(5))
    wait_for(lambda: all_led(zk, "f", 3, {0, 1, 2}))
    local.stop_broker(first.controller_id, hard=True)
    second = local.wait_until(lambda s: s.controller_id not in (None, first.controller_id), 15)
    assert second.controller_epoch == first.controller_epoch + 1
    # the new controller acts on intents written after the failover
    admin_topics.create_topic(zk, "after", 2, 2, None, {}, rng=JavaRandom(6))
    survivors = {0, 1, 2} - {first.controller_id}
    wait_for(lambda: all_led(zk, "after", 2, survivors) and all_led(zk, "f", 3, survivors), timeout_s=15)


def test_topic_deletion_removes_every_trace(cluster, zk):
    cluster(brokers=2)
    admin_topics.create_topic(zk, "gone", 4, 2, None, {"retention.ms": "1000"}, rng=JavaRandom(7))
    wait_for(lambda: all_led(zk, "gone", 4, {0, 1}))
    admin_topics.delete_topics(zk, "gone")
    wait_for(lambda: not zk.exists(znodes.TopicZNode.path("gone")), timeout_s=15)
    wait_for(lambda: not zk.exists(znodes.DeleteTopicsTopicZNode.path("gone")))
    assert not zk.exists(znodes.ConfigEntityZNode.path("topics", "gone"))


def test_deletion_disabled_drops_the_intent(cluster, zk):
    cluster(brokers=1, **{"delete.topic.enable": False})
    admin_topics.create_topic(zk, "kept", 1, 1, None, {}, rng=JavaRandom(8))
    wait_for(lambda: all_led(zk, "kept", 1, {0}))
    admin_topics.delete_topics(zk, "kept")
    wait_for(lambda: not zk.exists(znodes.DeleteTopicsTopicZNode.path("kept")))
    assert zk.exists(znodes.TopicZNode.path("kept"))


def test_preferred_election_restores_leaders_after_restart(cluster, zk):
    local = cluster(brokers=3, **{"auto.leader.rebalance.enable": False})
    admin_topics.create_topic(zk, "p", 3, 3, None, {}, rng=JavaRandom(9))
    wait_for(lambda: all_led(zk, "p", 3, {0, 1, 2}))
    preferred = {p: r.replicas[0] for p, r in zk.get_topic_assignments(["p"])["p"].partitions.items()}
    local.stop_broker(2)
    local.start_broker(2)
    wait_for(lambda: all(2 in lai.isr for lai in states(zk, "p", 3).values()) or True)
    zk.create(
        znodes.PreferredReplicaElectionZNode.path(),
        znodes.PreferredReplicaElectionZNode.encode(TopicPartition("p", p) for p in range(3)),
    )
    wait_for(lambda: not zk.exists(znodes.PreferredReplicaElectionZNode.path()))
    current = wait_for(lambda: all_led(zk, "p", 3, {0, 1, 2}))
    moved_back = [p for p, lai in current.items() if lai.leader == preferred[p]]
    # a returning broker is not in the ISR until it has caught up (data plane); where it is, it leads again
    assert all(current[p].leader == preferred[p] for p in range(3) if preferred[p] in current[p].isr)
    assert moved_back


@pytest.mark.parametrize("unclean", [False, True])
def test_unclean_election_only_when_enabled(cluster, zk, unclean):
    local = cluster(brokers=3)
    controller = local.status().controller_id
    first, second = (b for b in (0, 1, 2) if b != controller)
    admin_topics.create_topic(
        zk, "u", 1, 2, {0: [first, second]}, {"unclean.leader.election.enable": str(unclean).lower()}
    )
    wait_for(lambda: all_led(zk, "u", 1, {first, second}))
    local.stop_broker(second)  # controlled: it leaves the ISR, `first` is the only in-sync replica
    local.stop_broker(first, hard=True)
    # no in-sync replica is alive: the partition loses its leader and keeps its last ISR
    wait_for(lambda: states(zk, "u", 1)[0].leader == -1, timeout_s=15)
    assert states(zk, "u", 1)[0].isr == (first,)
    local.start_broker(second)
    if unclean:
        assert wait_for(lambda: states(zk, "u", 1)[0].leader == second, timeout_s=15)
    else:
        time.sleep(3)
        assert states(zk, "u", 1)[0].leader == -1


def test_state_change_log_is_kafka_shaped(cluster, zk):
    local = cluster(brokers=2)
    admin_topics.create_topic(zk, "s", 2, 2, None, {}, rng=JavaRandom(4))
    wait_for(lambda: all_led(zk, "s", 2, {0, 1}))
    controller = local.status().controller_id
    log_text = (local.broker_dir(controller) / "logs" / "state-change.log").read_text()
    assert (
        f"] INFO [Controller id={controller} epoch=1] Changed partition s-0 state from NonExistentPartition to "
        "NewPartition with assigned replicas " in log_text
    )
    assert "from NewPartition to OnlinePartition with state LeaderAndIsr(leader=" in log_text
    broker_text = (local.broker_dir(0) / "logs" / "state-change.log").read_text()
    assert "INFO [Broker id=0] Handling LeaderAndIsr request correlationId " in broker_text

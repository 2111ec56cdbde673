"""Intents and faults the controller must survive: ISR notifications, auto rebalance, bad znodes,
expired sessions, a ZooKeeper restart."""

from __future__ import annotations

import time

from kazoo.client import KazooClient

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.cluster.broker.network_client import send_request
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import TopicPartition
from tests.cluster.conftest import FAST


def state(zk, topic, partition):
    return zk.get_partition_states([TopicPartition(topic, partition)])[TopicPartition(topic, partition)]


def metadata(local: LocalCluster, broker_id: int, topic: str) -> dict:
    endpoint = next(b.endpoint for b in local.status().brokers if b.broker_id == broker_id)
    host, port = endpoint.removeprefix("PLAINTEXT://").rsplit(":", 1)
    body = send_request(host, int(port), ApiKey.METADATA, 8, {"topics": [{"name": topic}]}, "test")
    return {p["partition_index"]: p for p in body["topics"][0]["partitions"]}


def test_isr_notification_reaches_brokers_and_auto_rebalance_restores_the_preferred_leader(cluster, zk):
    local = cluster(brokers=3)
    controller = local.status().controller_id
    preferred, other = (b for b in (0, 1, 2) if b != controller)
    admin_topics.create_topic(zk, "r", 1, 2, {0: [preferred, other]}, {})
    wait_for(lambda: state(zk, "r", 0) is not None and state(zk, "r", 0).leader_and_isr.leader == preferred)
    local.stop_broker(preferred)  # controlled: `other` leads, `preferred` leaves the ISR
    assert state(zk, "r", 0).leader_and_isr.leader == other
    local.start_broker(preferred)
    # `other`, the leader, sees `preferred` catch up: it widens the ISR (a conditional state write) and
    # writes an ISR change notification
    wait_for(lambda: state(zk, "r", 0).leader_and_isr.isr == (other, preferred), timeout_s=30)
    # the controller propagates the new ISR to every broker's metadata cache and deletes the notification
    wait_for(lambda: metadata(local, controller, "r")[0]["isr_nodes"] == [other, preferred])
    wait_for(lambda: not zk.get_children(znodes.IsrChangeNotificationZNode.path()))
    # imbalance 100 % > 10 %: the next auto rebalance (every second here) moves the leader back
    wait_for(lambda: state(zk, "r", 0).leader_and_isr.leader == preferred, timeout_s=20)


def test_malformed_intents_are_dropped_and_the_controller_goes_on(cluster, zk):
    local = cluster(brokers=2)
    controller = local.status().controller_id
    zk.create(znodes.PreferredReplicaElectionZNode.path(), b"{not json")
    wait_for(lambda: not zk.exists(znodes.PreferredReplicaElectionZNode.path()))
    zk.create(znodes.TopicZNode.path("garbage"), b'{"version":1,"partitions":{"0":"x"}}')
    zk.create(znodes.TopicZNode.path("inconsistent"), b'{"version":1,"partitions":{"0":[0,1],"1":[0]}}')
    admin_topics.create_topic(zk, "fine", 2, 2, None, {}, rng=JavaRandom(1))
    wait_for(lambda: all(state(zk, "fine", p) is not None for p in range(2)))
    # a malformed topic and a good one in one transaction: one topic change sees both (Kafka 2.8 then
    # brings neither online); the good one comes online, the malformed one once its znode is repaired
    both = zk.kazoo.transaction()
    both.create(znodes.TopicZNode.path("broken"), b'{"version":1,"partitions":{"0":"x"}}')
    both.create(znodes.TopicZNode.path("beside"), znodes.TopicZNode.encode_replicas({0: [0, 1]}))
    assert all(result is True or isinstance(result, str) for result in both.commit())
    wait_for(lambda: state(zk, "beside", 0) is not None)
    zk.kazoo.set(znodes.TopicZNode.path("broken"), znodes.TopicZNode.encode_replicas({0: [1, 0]}))
    wait_for(lambda: state(zk, "broken", 0) is not None)
    # the topic's watch was set again when it fired: a partition added next is created too
    zk.kazoo.set(znodes.TopicZNode.path("broken"), znodes.TopicZNode.encode_replicas({0: [1, 0], 1: [0, 1]}))
    wait_for(lambda: state(zk, "broken", 1) is not None)
    assert local.status().controller_id == controller  # still the same controller, still acting
    assert all(local.broker_pid(b) is not None for b in (0, 1))


def _expire(zk_connect: str, session: tuple[int, bytes]) -> None:
    """ZooKeeper's own way to expire a session: another client joins it, then closes it."""
    hosts, _, chroot = zk_connect.partition("/")
    thief = KazooClient(hosts=hosts, client_id=session)
    thief.start(timeout=10)
    thief.stop()
    thief.close()


def test_expired_controller_session_resigns_and_reregisters(zk_connect, tmp_path):
    from kafkaops.cluster.local.inprocess import InProcessCluster

    cluster = InProcessCluster(zk_connect, tmp_path, 2, FAST)
    cluster.start()
    try:
        first = wait_for(lambda: cluster.controller())
        with KafkaZkClient(zk_connect) as zk:
            epoch = zk.get_controller_epoch()[0]
            _expire(zk_connect, first.zk.kazoo.client_id)
            wait_for(lambda: (zk.get_controller_epoch() or (0,))[0] > epoch, timeout_s=20)
            # the expired broker comes back with a new session and registers again
            wait_for(lambda: zk.exists(znodes.BrokerIdZNode.path(first.broker_id)), timeout_s=20)
            assert not first.controller.is_active or zk.get_controller_id() == first.broker_id
            admin_topics.create_topic(zk, "after-expiry", 1, 2, None, {}, rng=JavaRandom(2))
            wait_for(lambda: state(zk, "after-expiry", 0) is not None, timeout_s=20)
    finally:
        cluster.shutdown()


def test_zookeeper_restart_under_the_cluster(tmp_path):
    server = LocalZooKeeper(tmp_path / "zk", free_port())
    server.start()
    local = LocalCluster(tmp_path / "cluster")
    try:
        local.up(
            brokers=2,
            zookeeper_connect=server.connect_string,
            broker_overrides={**FAST, "zookeeper.session.timeout.ms": 10000},
        )
        with KafkaZkClient(server.connect_string) as zk:
            admin_topics.create_topic(zk, "z", 2, 2, None, {}, rng=JavaRandom(3))
            wait_for(lambda: all(state(zk, "z", p) is not None for p in range(2)))
        server.stop()
        time.sleep(1)
        server.start()  # same data dir and port: sessions resume within their timeout
        status = local.wait_until(lambda s: s.controller_id is not None and all(b.registered for b in s.brokers), 30)
        assert all(local.broker_pid(b) is not None for b in (0, 1))
        with KafkaZkClient(server.connect_string) as zk:
            admin_topics.create_topic(zk, "z2", 1, 2, None, {}, rng=JavaRandom(4))
            wait_for(lambda: state(zk, "z2", 0) is not None, timeout_s=20)
            # a partition added to a topic known from before: kazoo dropped the topic's one-shot watch with
            # the connection, and the controller has set it again (the same session, the same controller)
            admin_topics.create_partitions(zk, "z", 3, [[1, 0]])
            wait_for(lambda: state(zk, "z", 2) is not None, timeout_s=20)
            assert local.status().controller_epoch == status.controller_epoch
        assert status.controller_epoch is not None
    finally:
        for broker_id in (0, 1):
            local.stop_broker(broker_id, hard=True)
        server.stop()


def test_brokers_refuse_an_older_controller_epoch(cluster, zk):
    local = cluster(brokers=2)
    admin_topics.create_topic(zk, "e", 1, 2, {0: [0, 1]}, {})
    wait_for(lambda: state(zk, "e", 0) is not None)
    wait_for(lambda: metadata(local, 1, "e")[0]["leader_id"] == 0)
    endpoint = next(b.endpoint for b in local.status().brokers if b.broker_id == 1)
    host, port = endpoint.removeprefix("PLAINTEXT://").rsplit(":", 1)
    stale = {
        "controller_id": 7,
        "controller_epoch": 0,  # the cluster is at epoch 1
        "topic_states": [
            {
                "topic_name": "e",
                "partition_states": [
                    {
                        "partition_index": 0,
                        "controller_epoch": 0,
                        "leader": 1,
                        "leader_epoch": 99,
                        "isr": [1],
                        "zk_version": 0,
                        "replicas": [0, 1],
                        "is_new": False,
                    }
                ],
            }
        ],
        "live_leaders": [],
    }
    answer = send_request(host, int(port), ApiKey.LEADER_AND_ISR, 3, stale, "zombie-controller")
    assert answer["error_code"] == 11  # STALE_CONTROLLER_EPOCH
    stop = {
        "controller_id": 7,
        "controller_epoch": 0,
        "delete_partitions": True,
        "topics": [{"name": "e", "partition_indexes": [0]}],
    }
    assert send_request(host, int(port), ApiKey.STOP_REPLICA, 1, stop, "zombie-controller")["error_code"] == 11
    assert metadata(local, 1, "e")[0]["leader_id"] == 0

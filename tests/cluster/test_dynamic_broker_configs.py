"""Dynamic broker configs applied by running brokers (Kafka's `DynamicBrokerConfig`): a change of
`/config/brokers/<default>` reaches every broker through its change notification; the controller takes
`unclean.leader.election.enable` through its event queue and elects at once."""

from __future__ import annotations

from confluent_kafka import KafkaError, Producer

from kafkaops.admin import configs as admin_configs
from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.values import TopicPartition
from tests.cluster.test_elect_leaders import NO_REBALANCE, _leader, only_an_out_of_sync_replica_alive


def test_unclean_leader_election_enabled_live_elects_the_out_of_sync_replica(cluster, zk):
    _, _, second, u0 = only_an_out_of_sync_replica_alive(cluster, zk)
    # `second` is not in the ISR and unclean election is off: the partition stays offline
    assert _leader(zk, u0) == -1
    default = admin_configs.ConfigEntity(znodes.ConfigType.BROKER, znodes.DEFAULT_ENTITY_NAME)
    _, version = zk.get_entity_config(znodes.ConfigType.BROKER, znodes.DEFAULT_ENTITY_NAME)
    admin_configs.change_configs(zk, default, {"unclean.leader.election.enable": "true"}, version)
    wait_for(lambda: _leader(zk, u0) == second, timeout_s=30)


def test_min_insync_replicas_default_changed_live(cluster, zk):
    local = cluster(brokers=2, **NO_REBALANCE)
    admin_topics.create_topic(zk, "m", None, None, {0: [0]}, {}, rng=JavaRandom(1))
    m0 = TopicPartition("m", 0)
    wait_for(lambda: _leader(zk, m0) == 0)
    bootstrap = ",".join(b.endpoint.removeprefix("PLAINTEXT://") for b in local.status().brokers if b.endpoint)

    def produce() -> KafkaError | None:
        outcome: list[KafkaError | None] = []
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "message.timeout.ms": 3000, "retries": 0})
        producer.produce("m", b"v", on_delivery=lambda error, _msg: outcome.append(error))
        producer.flush(30)
        return outcome[0]

    assert produce() is None
    default = admin_configs.ConfigEntity(znodes.ConfigType.BROKER, znodes.DEFAULT_ENTITY_NAME)
    admin_configs.change_configs(zk, default, {"min.insync.replicas": "2"}, None)
    # a single-replica topic: acks=all is now refused by the running leader
    wait_for(lambda: (error := produce()) is not None and error.code() == KafkaError.NOT_ENOUGH_REPLICAS, timeout_s=60)

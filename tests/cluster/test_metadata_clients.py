"""Real Kafka clients find the leaders through our brokers' Metadata answers."""

from __future__ import annotations

from kafka import KafkaConsumer
from kafka.structs import TopicPartition as KafkaTopicPartition

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.zk.values import TopicPartition


def test_kafka_python_reads_metadata(cluster, zk):
    local = cluster(brokers=2)
    admin_topics.create_topic(zk, "meta", 3, 2, None, {}, rng=JavaRandom(11))
    wait_for(
        lambda: all(
            s is not None for s in zk.get_partition_states(TopicPartition("meta", p) for p in range(3)).values()
        )
    )
    bootstrap = local.status().brokers[0].endpoint.removeprefix("PLAINTEXT://")
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        assert wait_for(lambda: consumer.partitions_for_topic("meta") == {0, 1, 2}, timeout_s=15)
        assert "meta" in consumer.topics()
        leaders = {p: consumer._client.cluster.leader_for_partition(KafkaTopicPartition("meta", p)) for p in range(3)}
        states = zk.get_partition_states(TopicPartition("meta", p) for p in range(3))
        assert leaders == {tp.partition: s.leader_and_isr.leader for tp, s in states.items()}
    finally:
        consumer.close()

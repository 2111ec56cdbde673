"""Partition reassignment calls of Kafka's Admin API (KIP-455) over a `KafkaClient`:
alterPartitionReassignments (a target, or None to cancel) and listPartitionReassignments. Both go to
the controller. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from kafkaops.admin.kafka_client.admin_calls import broker_error, raise_for, to_controller
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cluster.common.errors import BrokerError
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition

DEFAULT_TIMEOUT_MS = 60000
"""The requests' own `TimeoutMs` default (Kafka's message definitions)."""


def _by_topic(partitions: Collection[TopicPartition]) -> dict[str, list[int]]:
    topics: dict[str, list[int]] = {}
    for tp in sorted(partitions):
        topics.setdefault(tp.topic, []).append(tp.partition)
    return topics


def alter_partition_reassignments(
    client: KafkaClient,
    reassignments: Mapping[TopicPartition, Sequence[int] | None],
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> dict[TopicPartition, BrokerError]:
    """Start (a replica list) or cancel (None) each partition's reassignment. Returns the partitions
    the controller refused, with their errors (Kafka's per-partition futures); raises a request-level
    error."""
    topics: dict[str, list[dict[str, object]]] = {}
    for tp in sorted(reassignments):
        replicas = reassignments[tp]
        topics.setdefault(tp.topic, []).append(
            {"partition_index": tp.partition, "replicas": None if replicas is None else list(replicas)}
        )
    body = {
        "timeout_ms": timeout_ms,
        "topics": [{"name": name, "partitions": partitions} for name, partitions in topics.items()],
    }
    answer = to_controller(client, ApiKey.ALTER_PARTITION_REASSIGNMENTS, body, timeout_ms)
    raise_for(answer.get("error_code", 0), answer.get("error_message"))
    return {
        TopicPartition(topic["name"], p["partition_index"]): broker_error(p["error_code"], p.get("error_message"))
        for topic in answer["responses"]
        for p in topic["partitions"]
        if p["error_code"]
    }


def list_partition_reassignments(
    client: KafkaClient,
    partitions: Collection[TopicPartition] | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> dict[TopicPartition, ReplicaAssignment]:
    """The ongoing reassignments (of `partitions`, or all for None): full replica set, adding and
    removing replicas, sorted by partition. Raises the request's error."""
    body = {
        "timeout_ms": timeout_ms,
        "topics": None
        if partitions is None
        else [{"name": name, "partition_indexes": indexes} for name, indexes in _by_topic(partitions).items()],
    }
    answer = to_controller(client, ApiKey.LIST_PARTITION_REASSIGNMENTS, body, timeout_ms)
    raise_for(answer.get("error_code", 0), answer.get("error_message"))
    found = {
        TopicPartition(topic["name"], p["partition_index"]): ReplicaAssignment(
            tuple(p["replicas"]), tuple(p["adding_replicas"]), tuple(p["removing_replicas"])
        )
        for topic in answer["topics"]
        for p in topic["partitions"]
    }
    return {tp: found[tp] for tp in sorted(found)}

"""Topic calls of Kafka's Admin API over a `KafkaClient`: listTopics and describeTopics (Metadata),
describeCluster's live brokers (Metadata), createTopics, deleteTopics, createPartitions.

Only the standard protocol, versions negotiated, so the calls work against any Kafka from 2.4 on.
Each call raises the first error the broker answered (`admin_calls.broker_error`: Kafka's text);
nothing here prints.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping, Sequence

from kafkaops.admin.kafka_client.admin_calls import raise_for, to_controller
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.kafka_client.metadata import TopicInfo
from kafkaops.cluster.common.errors import UnknownTopicOrPartitionError
from kafkaops.cluster.protocol.schemas import ApiKey

ZERO_UUID = uuid.UUID(int=0)
"""DeleteTopics v6+: a topic named, not given by id."""

DEFAULT = -1
"""CreateTopics v4+: the broker's `num.partitions` / `default.replication.factor`."""


def list_topics(client: KafkaClient, list_internal: bool = True) -> list[str]:
    """Every topic's name, sorted (Kafka's `listTopics`, `listInternal` as asked)."""
    topics = client.metadata(None).topics.values()
    return sorted(t.name for t in topics if list_internal or not t.is_internal)


def describe_topics(client: KafkaClient, names: Sequence[str]) -> dict[str, TopicInfo]:
    """The topics' partitions, leaders, replicas and ISRs (Kafka's `describeTopics`). Raises
    UnknownTopicOrPartitionError (Kafka's text) for a topic that does not exist, or its error."""
    topics = client.metadata(list(names)).topics
    for name in names:
        info = topics.get(name)
        if info is None:
            raise UnknownTopicOrPartitionError(f"Topic {name} not found.", named=False)
        raise_for(info.error_code)
    return {name: topics[name] for name in names}


def live_brokers(client: KafkaClient) -> list[int]:
    """The ids of the brokers the cluster's metadata names (Kafka's `describeCluster().nodes()`)."""
    return sorted(client.metadata([]).brokers)


@dataclasses.dataclass(frozen=True)
class NewTopic:
    """Kafka's `NewTopic`: a partition count and replication factor (DEFAULT for the broker's), or a
    manual assignment (partition -> brokers)."""

    name: str
    num_partitions: int = DEFAULT
    replication_factor: int = DEFAULT
    assignment: Mapping[int, Sequence[int]] | None = None
    configs: Mapping[str, str] = dataclasses.field(default_factory=dict)


def create_topics(
    client: KafkaClient, topics: Sequence[NewTopic], timeout_ms: int, validate_only: bool = False
) -> None:
    """CreateTopics to the controller; returns once the topics' metadata reached the brokers (within
    `timeout_ms`). Raises the first topic's error (TopicExistsError, InvalidReplicationFactorError, ...)."""
    body = {
        "topics": [
            {
                "name": t.name,
                "num_partitions": DEFAULT if t.assignment else t.num_partitions,
                "replication_factor": DEFAULT if t.assignment else t.replication_factor,
                "assignments": [
                    {"partition_index": p, "broker_ids": list(brokers)} for p, brokers in (t.assignment or {}).items()
                ],
                "configs": [{"name": k, "value": v} for k, v in t.configs.items()],
            }
            for t in topics
        ],
        "timeout_ms": timeout_ms,
        "validate_only": validate_only,
    }
    answer = to_controller(client, ApiKey.CREATE_TOPICS, body, timeout_ms)
    for result in answer["topics"]:
        raise_for(result["error_code"], result.get("error_message"))


def delete_topics(client: KafkaClient, names: Sequence[str], timeout_ms: int) -> None:
    """DeleteTopics to the controller (by name: `topic_names` up to v5, `topics` from v6). Raises the
    first topic's error (UnknownTopicOrPartitionError, TopicDeletionDisabledError, ...)."""
    body = {
        "topics": [{"name": n, "topic_id": ZERO_UUID} for n in names],
        "topic_names": list(names),
        "timeout_ms": timeout_ms,
    }
    answer = to_controller(client, ApiKey.DELETE_TOPICS, body, timeout_ms)
    for result in answer["responses"]:
        raise_for(result["error_code"], result.get("error_message"))


@dataclasses.dataclass(frozen=True)
class NewPartitions:
    """Kafka's `NewPartitions.increaseTo(count[, assignments of the new partitions])`."""

    total_count: int
    new_assignments: Sequence[Sequence[int]] | None = None


def create_partitions(
    client: KafkaClient, partitions: Mapping[str, NewPartitions], timeout_ms: int, validate_only: bool = False
) -> None:
    """CreatePartitions to the controller. Raises the first topic's error (InvalidPartitionsError,
    InvalidReplicaAssignmentError, UnknownTopicOrPartitionError, ...)."""
    body = {
        "topics": [
            {
                "name": name,
                "count": p.total_count,
                "assignments": None
                if p.new_assignments is None
                else [{"broker_ids": list(brokers)} for brokers in p.new_assignments],
            }
            for name, p in partitions.items()
        ],
        "timeout_ms": timeout_ms,
        "validate_only": validate_only,
    }
    answer = to_controller(client, ApiKey.CREATE_PARTITIONS, body, timeout_ms)
    for result in answer["results"]:
        raise_for(result["error_code"], result.get("error_message"))

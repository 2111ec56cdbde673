"""kafka-topics through the Admin API (Kafka 2.8 `TopicCommand.AdminClientTopicService`); the ZooKeeper
path is `admin.topics`. The same result values come back, so the CLI renders one text for both.

Topic names are selected as Kafka does (`select_topics`: sorted, whitelist regex, internal topics
optionally left out) from Metadata; what the brokers refuse comes back as their error, with Kafka's
text (`admin.kafka_client.admin_calls`). Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.kafka_client.client_config import AdminClientConfig
from kafkaops.admin.kafka_client.config_admin import ConfigEntry, ConfigResource, ResourceType, describe_configs
from kafkaops.admin.kafka_client.metadata import TopicInfo
from kafkaops.admin.kafka_client.reassignment_admin import list_partition_reassignments
from kafkaops.admin.kafka_client.topic_admin import (
    NewPartitions,
    NewTopic,
    create_partitions,
    create_topics,
    delete_topics,
    describe_topics,
    list_topics,
    live_brokers,
)
from kafkaops.admin.topics import (
    DescribeFilters,
    PartitionDescription,
    TopicDescription,
    TopicListing,
    ensure_topic_exists,
    select_topics,
)
from kafkaops.cluster.common.errors import (
    ClusterAuthorizationFailedError,
    InvalidArgumentError,
    TopicExistsError,
    UnsupportedVersionError,
)
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition

SHORT_MAX = 32767


def get_topics(client: KafkaClient, topic: str | None, exclude_internal: bool) -> list[str]:
    """`AdminClientTopicService.getTopics`."""
    return select_topics(list_topics(client, list_internal=not exclude_internal), topic, exclude_internal)


def list_topic_names(client: KafkaClient, topic: str | None, exclude_internal: bool) -> list[TopicListing]:
    """`--list`: the names only (the Admin API does not say which topics are being deleted)."""
    return [TopicListing(name, False) for name in get_topics(client, topic, exclude_internal)]


def create_topic(
    client: KafkaClient,
    config: AdminClientConfig,
    topic: str,
    partitions: int | None,
    replication_factor: int | None,
    assignment: Mapping[int, Sequence[int]] | None,
    topic_config: Mapping[str, str],
    if_not_exists: bool = False,
) -> bool:
    """`AdminClientTopicService.createTopic`: CreateTopics with the broker's defaults for what is not
    given. False when the topic existed and `if_not_exists` was given. Raises InvalidArgumentError
    (Kafka's texts) for a replication factor or partition count out of range, else the broker's error."""
    if replication_factor is not None and not 1 <= replication_factor <= SHORT_MAX:
        raise InvalidArgumentError(f"The replication factor must be between 1 and {SHORT_MAX} inclusive")
    if partitions is not None and partitions < 1:
        raise InvalidArgumentError("The partitions must be greater than 0")
    new_topic = NewTopic(
        topic,
        -1 if partitions is None else partitions,
        -1 if replication_factor is None else replication_factor,
        assignment,
        dict(topic_config),
    )
    try:
        create_topics(client, [new_topic], config.api_timeout_ms)
    except TopicExistsError:
        if if_not_exists:
            return False
        raise
    return True


def alter_topics(
    client: KafkaClient,
    config: AdminClientConfig,
    topic: str,
    partitions: int,
    assignment: Mapping[int, Sequence[int]] | None,
    if_exists: bool = False,
    exclude_internal: bool = False,
) -> list[str]:
    """`AdminClientTopicService.alterTopic`: CreatePartitions up to `partitions` for every topic the
    whitelist selects; a manual assignment's entries beyond each topic's current partitions are the new
    partitions' replicas. Returns the topics altered."""
    selected = get_topics(client, topic, exclude_internal)
    ensure_topic_exists(selected, topic, required=not if_exists)
    if not selected:
        return []
    described = describe_topics(client, selected) if assignment else {}
    new_partitions = {}
    for name in selected:
        added = None
        if assignment:
            start = len(described[name].partitions)
            added = [list(replicas) for index, replicas in sorted(assignment.items()) if index >= start]
        new_partitions[name] = NewPartitions(partitions, added)
    create_partitions(client, new_partitions, config.api_timeout_ms)
    return selected


def delete_topic_names(
    client: KafkaClient, config: AdminClientConfig, topic: str, if_exists: bool = False, exclude_internal: bool = False
) -> list[str]:
    """`AdminClientTopicService.deleteTopic`: DeleteTopics of every topic the whitelist selects."""
    selected = get_topics(client, topic, exclude_internal)
    ensure_topic_exists(selected, topic, required=not if_exists)
    if selected:
        delete_topics(client, selected, config.api_timeout_ms)
    return selected


def _reassignments(
    client: KafkaClient, partitions: Sequence[TopicPartition]
) -> dict[TopicPartition, ReplicaAssignment]:
    """Ongoing reassignments of the partitions; none when the broker does not serve the API or refuses
    it, as Kafka's `listAllReassignments`."""
    try:
        return list_partition_reassignments(client, partitions)
    except (UnsupportedVersionError, ClusterAuthorizationFailedError):
        return {}


def describe(
    client: KafkaClient,
    topic: str | None,
    filters: DescribeFilters,
    if_exists: bool = False,
    exclude_internal: bool = False,
) -> list[TopicDescription]:
    """`AdminClientTopicService.describeTopic`: Metadata, each topic's DescribeConfigs (its non-default
    configs on the topic line, `min.insync.replicas` for the min-ISR filters), the live brokers, and
    the ongoing reassignments (shown on the partition lines)."""
    selected = get_topics(client, topic, exclude_internal)
    ensure_topic_exists(selected, topic, required=not if_exists)
    if not selected:
        return []
    configs = {name: describe_configs(client, ConfigResource(ResourceType.TOPIC, name)) for name in selected}
    live = set(live_brokers(client))
    infos = describe_topics(client, selected)
    reassignments = _reassignments(
        client, [TopicPartition(name, p.partition) for name in selected for p in infos[name].partitions]
    )
    return [_description(infos[name], configs[name], live, reassignments, filters) for name in selected]


def _description(
    info: TopicInfo,
    entries: Sequence[ConfigEntry],
    live: set[int],
    reassignments: Mapping[TopicPartition, ReplicaAssignment],
    filters: DescribeFilters,
) -> TopicDescription:
    by_name = {e.name: e.value for e in entries}
    min_isr = int(by_name.get("min.insync.replicas") or 1)
    partitions = []
    replication_factor = 0
    for index, p in enumerate(info.partitions):
        reassignment = reassignments.get(TopicPartition(info.name, p.partition))
        adding = tuple(reassignment.adding_replicas) if reassignment else ()
        removing = tuple(reassignment.removing_replicas) if reassignment else ()
        # Kafka's getReplicationFactor: the adding replicas do not count while they are in the replica set
        in_progress = any(r in p.replicas for r in (*adding, *removing))
        leader = p.leader if p.leader >= 0 else None
        description = PartitionDescription(
            topic=info.name,
            partition=p.partition,
            leader=leader,
            replicas=tuple(p.replicas),
            isr=tuple(p.isr),
            adding_replicas=adding if in_progress else (),
            removing_replicas=removing,
            marked_for_deletion=False,
            min_isr=min_isr,
            leader_live=leader in live,
            show_reassignment=reassignment is not None,
        )
        if index == 0:
            replication_factor = description.replication_factor
        if filters.describe_partitions and description.selected_by(filters):
            partitions.append(description)
    overrides = tuple((e.name, e.value or "") for e in entries if not e.is_default)
    return TopicDescription(
        topic=info.name,
        exists=True,
        topic_id=info.topic_id,
        partition_count=len(info.partitions),
        replication_factor=replication_factor,
        configs=overrides,
        show_topic_line=filters.describe_configs and (not filters.topics_with_overrides or bool(overrides)),
        partitions=tuple(partitions),
    )

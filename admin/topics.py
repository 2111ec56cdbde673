"""kafka-topics in ZooKeeper mode (Kafka 2.8 `TopicCommand.ZookeeperTopicService`, `AdminZkClient`).

Every function validates everything before its first write, so bad input leaves ZooKeeper as it was;
each write is one ZooKeeper multi. Results are plain values; the CLI renders Kafka's text.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from kafkaops.admin import assignment as assign
from kafkaops.admin.config_def import (
    topic_config_value,
    validate_topic_config,
    validate_topic_config_names,
)
from kafkaops.cluster.common.errors import (
    AdminOperationError,
    InvalidArgumentError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidTopicError,
    ReassignmentInProgressError,
    TopicExistsError,
    UnknownTopicOrPartitionError,
    ZNodeVersionConflictError,
)
from kafkaops.cluster.common.jvm_text import hash_map_order, java_split
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import INTERNAL_TOPICS, ReplicaAssignment, TopicAssignment, TopicPartition

MAX_NAME_LENGTH = 249
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")


# --- names and filters --------------------------------------------------------------------------


def validate_topic_name(topic: str) -> None:
    """Kafka 2.8 `Topic.validate`, with its texts."""
    if not topic:
        raise InvalidTopicError("Topic name is illegal, it can't be empty")
    if topic in (".", ".."):
        raise InvalidTopicError('Topic name cannot be "." or ".."')
    if len(topic) > MAX_NAME_LENGTH:
        raise InvalidTopicError(
            f"Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, topic name: {topic}"
        )
    if not _LEGAL_TOPIC.fullmatch(topic):
        raise InvalidTopicError(
            f'Topic name "{topic}" is illegal, it contains a character other than '
            "ASCII alphanumerics, '.', '_' and '-'"
        )


def has_collision_chars(topic: str) -> bool:
    return "." in topic or "_" in topic


def has_collision(topic_a: str, topic_b: str) -> bool:
    return topic_a.replace(".", "_") == topic_b.replace(".", "_")


def is_internal(topic: str) -> bool:
    return topic in INTERNAL_TOPICS


def topic_whitelist(raw: str) -> re.Pattern[str]:
    """Kafka's `Whitelist` regex: commas mean `|`, spaces and surrounding quotes are dropped."""
    regex = re.sub(r"""["']+$""", "", re.sub(r"""^["']+""", "", raw.strip().replace(",", "|").replace(" ", "")))
    try:
        return re.compile(regex)
    except re.error:
        raise InvalidArgumentError(f"{regex} is an invalid regex.") from None


def select_topics(all_topics: Sequence[str], topic: str | None, exclude_internal: bool) -> list[str]:
    """`TopicCommand.getTopics`: sorted, whitelist-matched (whole name), internal topics optionally out."""
    selected = sorted(all_topics)
    if topic is not None:
        pattern = topic_whitelist(topic)
        selected = [t for t in selected if pattern.fullmatch(t)]
    if exclude_internal:
        selected = [t for t in selected if not is_internal(t)]
    return selected


def ensure_topic_exists(selected: Sequence[str], topic: str | None, required: bool) -> None:
    if topic is not None and not selected and required:
        raise InvalidArgumentError(f"Topic '{topic}' does not exist as expected")


# --- parsing of command-line values -------------------------------------------------------------


def parse_topic_configs(items: Sequence[str]) -> dict[str, str]:
    """`--config k=v` values (Java split on `\\s*=\\s*`, exactly two parts each), validated as LogConfig does.

    Kafka checks the format with Scala's `require`, whence the `requirement failed: ` lead-in.
    """
    config: dict[str, str] = {}
    for item in items:
        parts = java_split(item, r"\s*=\s*")
        if len(parts) != 2:
            raise InvalidArgumentError(
                'requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".'
            )
        config[parts[0].strip()] = parts[1].strip()
    validate_topic_config(config)
    return config


# --- list ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TopicListing:
    topic: str
    marked_for_deletion: bool


def list_topics(zk: KafkaZkClient, topic: str | None = None, exclude_internal: bool = False) -> list[TopicListing]:
    deleting = zk.get_topics_marked_for_deletion()
    return [TopicListing(t, t in deleting) for t in select_topics(zk.get_all_topics(), topic, exclude_internal)]


# --- create -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CreateTopicResult:
    topic: str
    created: bool  # False when it existed and --if-not-exists was given
    assignment: dict[int, list[int]]
    config: dict[str, str]


def rack_map(
    zk: KafkaZkClient, rack_aware: bool, broker_ids: Sequence[int] | None = None
) -> tuple[list[int], dict[int, str] | None]:
    """`AdminZkClient.getBrokerMetadatas(rackAwareMode)`: sorted live broker ids and their racks.

    Rack mode Enforced refuses a cluster where some but not all brokers have a rack.
    """
    brokers = [(b.broker_id, b.rack) for b in zk.get_all_brokers() if broker_ids is None or b.broker_id in broker_ids]
    return broker_racks(brokers, rack_aware)


def broker_racks(
    brokers: Sequence[tuple[int, str | None]], rack_aware: bool = True
) -> tuple[list[int], dict[int, str] | None]:
    """`rack_map` over given (broker id, rack) pairs: a broker's Admin API handlers assign over the
    brokers of its metadata cache, as Kafka's do."""
    brokers = sorted(brokers)
    ids = [broker_id for broker_id, _ in brokers]
    racks = {broker_id: rack for broker_id, rack in brokers if rack is not None}
    if not rack_aware or not racks:
        return ids, None
    if len(racks) != len(brokers):
        raise AdminOperationError(
            "Not all brokers have rack information. Add --disable-rack-aware in command line "
            "to make replica assignment without rack information."
        )
    return ids, dict(racks)


def create_topic(
    zk: KafkaZkClient,
    topic: str,
    partitions: int | None,
    replication_factor: int | None,
    replica_assignment: Mapping[int, Sequence[int]] | None,
    config: Mapping[str, str],
    rack_aware: bool = True,
    if_not_exists: bool = False,
    rng: assign.IntRandom | None = None,
    validate_only: bool = False,
    brokers: Sequence[tuple[int, str | None]] | None = None,
    topic_id: str | None = None,
) -> CreateTopicResult:
    """`AdminZkClient.createTopic` / `createTopicWithAssignment`, then one atomic write.

    kafka-topics passes the flags; a broker's CreateTopics passes `validate_only` and `brokers`, the
    (id, rack) pairs of its metadata cache's live brokers (None: the brokers registered in ZooKeeper), and
    the new topic's `topic_id` (Kafka 2.8's `usesTopicId`; kafka-topics --zookeeper writes none).
    With `validate_only` everything is checked and nothing written (`created` is then False)."""
    validate_topic_name(topic)
    # Kafka's createTopicWithAssignment reads no rack information: a given assignment needs none
    rack_aware = rack_aware and not replica_assignment
    broker_ids, racks = rack_map(zk, rack_aware) if brokers is None else broker_racks(brokers, rack_aware)
    if replica_assignment:
        assignment = {p: list(r) for p, r in replica_assignment.items()}
        _check_brokers_registered(assignment, broker_ids)
    else:
        if partitions is None or replication_factor is None:
            raise InvalidArgumentError(
                "--partitions and --replication-factor are required without --replica-assignment"
            )
        assignment = assign.assign_replicas_to_brokers(broker_ids, partitions, replication_factor, racks=racks, rng=rng)
    try:
        _validate_topic_create(zk, topic, assignment, config)
        if validate_only:
            return CreateTopicResult(topic, False, assignment, dict(config))
        zk.create_topic(topic, assignment, config, topic_id)
    except TopicExistsError:
        if if_not_exists:
            return CreateTopicResult(topic, False, assignment, dict(config))
        raise
    return CreateTopicResult(topic, True, assignment, dict(config))


def _check_brokers_registered(assignment: Mapping[int, Sequence[int]], broker_ids: Sequence[int]) -> None:
    # Kafka's ZooKeeper path accepts unknown brokers here and leaves the partitions offline for ever;
    # refuse them with the text Kafka uses when adding partitions.
    for partition in sorted(assignment):
        assign.check_brokers_available(partition, assignment[partition], broker_ids)


def _validate_topic_create(
    zk: KafkaZkClient, topic: str, assignment: Mapping[int, Sequence[int]], config: Mapping[str, str]
) -> None:
    """Kafka 2.8 `AdminZkClient.validateTopicCreate`, in its order."""
    validate_topic_name(topic)
    if topic in zk.get_topics_marked_for_deletion():
        raise TopicExistsError(f"Topic '{topic}' is marked for deletion.")
    if zk.topic_exists(topic):
        raise TopicExistsError(f"Topic '{topic}' already exists.")
    if has_collision_chars(topic):
        colliding = [t for t in zk.get_all_topics() if has_collision(topic, t)]
        if colliding:
            raise InvalidTopicError(f"Topic '{topic}' collides with existing topics: {', '.join(colliding)}")
    assign.validate_create_assignment(assignment)
    validate_topic_config(config)


# --- alter --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class AlterTopicResult:
    topic: str
    config_changed: bool
    config: dict[str, str]
    added_partitions: dict[int, list[int]]


def alter_topics(
    zk: KafkaZkClient,
    topic: str,
    add_config: Mapping[str, str],
    delete_config: Sequence[str],
    partitions: int | None,
    replica_assignment: Mapping[int, Sequence[int]] | None,
    if_exists: bool = False,
    exclude_internal: bool = False,
    rng: assign.IntRandom | None = None,
) -> list[AlterTopicResult]:
    """`ZookeeperTopicService.alterTopic` for every topic the whitelist selects.

    Every topic's new config and new partitions are computed and validated first; only then is
    anything written, each topic in one multi, conditional on what was read.
    """
    selected = select_topics(zk.get_all_topics(), topic, exclude_internal)
    ensure_topic_exists(selected, topic, required=not if_exists)
    delete_names = [name.strip() for name in delete_config]
    validate_topic_config_names(delete_names)
    change_config = bool(add_config) or bool(delete_names)
    plans = []
    for name in selected:
        current, version = zk.get_entity_config(znodes.ConfigType.TOPIC, name)
        new_config = dict(current)
        if change_config:
            new_config.update(add_config)
            for key in delete_names:
                new_config.pop(key, None)
            validate_topic_config(new_config)
        added: dict[int, list[int]] = {}
        assignment_and_version = None
        if partitions is not None:
            if is_internal(name):
                raise InvalidArgumentError(f"The number of partitions for the internal topic {name} cannot be changed.")
            assignment_and_version = zk.get_topic_assignment_versioned(name)
            if assignment_and_version is None or not assignment_and_version[0].partitions:
                raise InvalidTopicError(f"The topic {name} does not exist")
            existing = assignment_and_version[0].replicas
            manual = {p: list(r) for p, r in (replica_assignment or {}).items() if p >= len(existing)}
            broker_ids, racks = rack_map(zk, rack_aware=True)
            added = assign.new_partitions_assignment(
                name, existing, broker_ids, partitions, racks=racks, replica_assignment=manual or None, rng=rng
            )
        plans.append((name, new_config, version, added, assignment_and_version))
    results = []
    for name, new_config, version, added, assignment_and_version in plans:
        if change_config:
            zk.set_entity_config_and_notify(znodes.ConfigType.TOPIC, name, new_config, version)
        if added and assignment_and_version is not None:
            write_added_partitions(zk, name, assignment_and_version, added)
        results.append(AlterTopicResult(name, change_config, new_config, added))
    return results


def create_partitions(
    zk: KafkaZkClient,
    topic: str,
    count: int,
    assignments: Sequence[Sequence[int]] | None,
    validate_only: bool = False,
    rng: assign.IntRandom | None = None,
) -> dict[int, list[int]]:
    """Grow `topic` to `count` partitions (Kafka 2.8 `ZkAdminManager.createPartitions` and the
    `AdminZkClient` calls it makes): the Admin API's CreatePartitions. `assignments` lists the new
    partitions' replicas in order. Returns the new partitions' replicas; writes nothing with
    `validate_only`.

    Raises ReassignmentInProgressError, UnknownTopicOrPartitionError, InvalidPartitionsError,
    InvalidReplicaAssignmentError, BrokerNotAvailableError with Kafka's texts."""
    found = zk.get_topic_assignment_versioned(topic)
    if found is not None and any(r.is_being_reassigned for r in found[0].partitions.values()):
        raise ReassignmentInProgressError(f"A partition reassignment is in progress for the topic '{topic}'.")
    if found is None or not found[0].partitions:
        raise UnknownTopicOrPartitionError(f"The topic '{topic}' does not exist.", named=False)
    current, version = found
    existing = current.replicas
    increment = count - len(existing)
    if increment < 0:
        raise InvalidPartitionsError(
            f"Topic currently has {len(existing)} partitions, which is higher than the requested {count}."
        )
    if increment == 0:
        raise InvalidPartitionsError(f"Topic already has {len(existing)} partitions.")
    broker_ids, racks = rack_map(zk, rack_aware=True)
    manual = None
    if assignments is not None:
        unknown = sorted({b for replicas in assignments for b in replicas} - set(broker_ids))
        if unknown:
            raise InvalidReplicaAssignmentError(
                f"Unknown broker(s) in replica assignment: {', '.join(map(str, unknown))}."
            )
        if len(assignments) != increment:
            raise InvalidReplicaAssignmentError(
                f"Increasing the number of partitions by {increment} but {len(assignments)} assignments provided."
            )
        manual = {len(existing) + i: list(replicas) for i, replicas in enumerate(assignments)}
    added = assign.new_partitions_assignment(
        topic, existing, broker_ids, count, racks=racks, replica_assignment=manual, rng=rng
    )
    if not validate_only:
        write_added_partitions(zk, topic, (current, version), added)
    return added


ADD_PARTITIONS_ATTEMPTS = 3


def write_added_partitions(
    zk: KafkaZkClient, topic: str, read: tuple[TopicAssignment, int], added: Mapping[int, Sequence[int]]
) -> None:
    """`/brokers/topics/<topic>` with the `added` partitions, conditional on the version `read`.

    A znode that moved on with its partitions as they were read is merged into again (Kafka's controller
    writes the topic id into the znode of a topic created without one, just after it appears: a tool
    adding partitions at once lost that race); a change of the partitions themselves raises
    ZNodeVersionConflictError, nothing written. Kafka writes unconditionally, after re-reading the id.
    """
    current, version = read
    for attempt in range(1, ADD_PARTITIONS_ATTEMPTS + 1):
        merged = {**current.partitions, **{p: ReplicaAssignment(tuple(r)) for p, r in added.items()}}
        try:
            zk.set_topic_assignment(topic, TopicAssignment(merged, current.topic_id), version)
            return
        except ZNodeVersionConflictError:
            again = zk.get_topic_assignment_versioned(topic)
            if attempt == ADD_PARTITIONS_ATTEMPTS or again is None or again[0].partitions != current.partitions:
                raise
            current, version = again


# --- delete -------------------------------------------------------------------------------------


def delete_topic(zk: KafkaZkClient, topic: str) -> bool:
    """Mark `topic` for deletion (Kafka's `AdminZkClient.deleteTopic`); False if it already was.
    Raises UnknownTopicOrPartitionError if it does not exist."""
    if not zk.topic_exists(topic):
        raise UnknownTopicOrPartitionError(f"topic {topic} to delete does not exist", named=False)
    return zk.mark_topic_for_deletion(topic)


@dataclasses.dataclass(frozen=True)
class DeleteTopicResult:
    topic: str
    already_marked: bool


def delete_topics(
    zk: KafkaZkClient, topic: str, if_exists: bool = False, exclude_internal: bool = False
) -> list[DeleteTopicResult]:
    selected = select_topics(zk.get_all_topics(), topic, exclude_internal)
    ensure_topic_exists(selected, topic, required=not if_exists)
    for name in selected:
        if is_internal(name):
            raise AdminOperationError(
                f"Topic {name} is a kafka internal topic and is not allowed to be marked for deletion."
            )
    return [DeleteTopicResult(name, not zk.mark_topic_for_deletion(name)) for name in selected]


# --- describe -----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DescribeFilters:
    under_replicated: bool = False
    unavailable: bool = False
    under_min_isr: bool = False
    at_min_isr: bool = False
    topics_with_overrides: bool = False

    @property
    def describe_configs(self) -> bool:
        return not (self.under_replicated or self.unavailable or self.under_min_isr or self.at_min_isr)

    @property
    def describe_partitions(self) -> bool:
        return not self.topics_with_overrides


@dataclasses.dataclass(frozen=True)
class PartitionDescription:
    topic: str
    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    marked_for_deletion: bool
    min_isr: int
    leader_live: bool
    show_reassignment: bool = False  # the Admin API path prints the adding/removing replicas

    @property
    def replication_factor(self) -> int:
        # during a reassignment the replicas being added do not count (Kafka 2.5+)
        return len(self.replicas) - len(self.adding_replicas)

    @property
    def under_replicated(self) -> bool:
        return self.replication_factor - len(self.isr) > 0

    @property
    def unavailable(self) -> bool:
        return self.leader is None or not self.leader_live

    @property
    def under_min_isr(self) -> bool:
        return self.leader is None or len(self.isr) < self.min_isr

    @property
    def at_min_isr(self) -> bool:
        return len(self.isr) == self.min_isr

    def selected_by(self, filters: DescribeFilters) -> bool:
        return (
            filters.describe_configs
            or (filters.under_replicated and self.under_replicated)
            or (filters.unavailable and self.unavailable)
            or (filters.under_min_isr and self.under_min_isr)
            or (filters.at_min_isr and self.at_min_isr)
        )


@dataclasses.dataclass(frozen=True)
class TopicDescription:
    topic: str
    exists: bool
    topic_id: str | None = None
    partition_count: int = 0
    replication_factor: int = 0
    configs: tuple[tuple[str, str], ...] = ()  # in Kafka's printed order
    marked_for_deletion: bool = False
    show_topic_line: bool = False
    partitions: tuple[PartitionDescription, ...] = ()


def describe_topics(
    zk: KafkaZkClient,
    topic: str | None = None,
    filters: DescribeFilters = DescribeFilters(),
    if_exists: bool = False,
    exclude_internal: bool = False,
) -> list[TopicDescription]:
    """`ZookeeperTopicService.describeTopic`: one pipelined read per kind of znode for all topics.

    min.insync.replicas (for the two min-ISR filters, which Kafka refuses with --zookeeper) is the
    topic's override, else the cluster default in `/config/brokers/<default>`, else 1.
    """
    selected = select_topics(zk.get_all_topics(), topic, exclude_internal)
    ensure_topic_exists(selected, topic, required=not if_exists)
    live_brokers = set(zk.get_sorted_broker_ids())
    deleting = zk.get_topics_marked_for_deletion()
    assignments = zk.get_topic_assignments(selected)
    configs = zk.get_entity_configs(znodes.ConfigType.TOPIC, [t for t in selected if t in assignments])
    broker_defaults, _ = zk.get_entity_config(znodes.ConfigType.BROKER, znodes.DEFAULT_ENTITY_NAME)
    states = (
        zk.get_partition_states(
            TopicPartition(t, p) for t in selected if t in assignments for p in assignments[t].partitions
        )
        if filters.describe_partitions
        else {}
    )
    result = []
    for name in selected:
        topic_assignment = assignments.get(name)
        if topic_assignment is None:
            result.append(TopicDescription(name, exists=False))
            continue
        overrides = configs.get(name, {})
        marked = name in deleting
        partitions = []
        if filters.describe_partitions:
            min_isr = topic_config_value(overrides, "min.insync.replicas", broker_defaults)
            for partition, replica_assignment in sorted(topic_assignment.partitions.items()):
                state = states.get(TopicPartition(name, partition))
                leader = state.leader_and_isr.leader if state is not None else None
                if leader is not None and leader < 0:
                    leader = None
                description = PartitionDescription(
                    topic=name,
                    partition=partition,
                    leader=leader,
                    replicas=replica_assignment.replicas,
                    isr=state.leader_and_isr.isr if state is not None else (),
                    adding_replicas=replica_assignment.adding_replicas,
                    removing_replicas=replica_assignment.removing_replicas,
                    marked_for_deletion=marked,
                    min_isr=min_isr,
                    leader_live=leader in live_brokers,
                )
                if description.selected_by(filters):
                    partitions.append(description)
        first = topic_assignment.partitions[min(topic_assignment.partitions)] if topic_assignment.partitions else None
        result.append(
            TopicDescription(
                topic=name,
                exists=True,
                topic_id=topic_assignment.topic_id,
                partition_count=len(topic_assignment.partitions),
                replication_factor=len(first.replicas) if first else 0,
                configs=tuple((k, overrides[k]) for k in hash_map_order(overrides)),
                marked_for_deletion=marked,
                show_topic_line=filters.describe_configs and (not filters.topics_with_overrides or bool(overrides)),
                partitions=tuple(partitions),
            )
        )
    return result

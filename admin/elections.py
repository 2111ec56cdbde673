"""Leader elections: Kafka's election files, the preferred-replica intent, and the election result model
(kafka-reference.md §2.4 kafka-preferred-replica-election, §2.5 kafka-leader-election, §5.7).

Two ways to ask for an election, one result model:

* through ZooKeeper (`--zookeeper`): `/admin/preferred_replica_election` is the controller's intent for
  preferred elections. `start_preferred_replica_election` writes it and returns (Kafka's
  kafka-preferred-replica-election); `elect_preferred_via_zookeeper` writes it, waits until the
  controller has acted, and reports per partition as Kafka's ElectLeaders API would
  (kafka-leader-election). ZooKeeper has no intent for unclean elections.
* through a broker (`--bootstrap-server`, an ElectLeaders request): `elect_leaders_via_broker`; any
  broker forwards it to the controller, which elects (preferred or unclean) and answers per partition.

Either way the answer is an `ElectionResult`: per partition no error (elected) or the Kafka error the
controller answers (the floor's `errors` classes: ELECTION_NOT_NEEDED, UNKNOWN_TOPIC_OR_PARTITION,
PREFERRED_LEADER_NOT_AVAILABLE, ...), so a broker's ElectLeaders response maps onto it code for code.
Nothing here prints; the CLI renders Kafka's texts.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Collection, Mapping, Sequence

from kazoo.exceptions import NodeExistsError

from kafkaops.admin.kafka_text import (
    duplicates,
    json_array,
    json_field,
    json_int,
    json_object,
    json_string,
    load_json,
    topic_partition_hash,
)
from kafkaops.admin.reassignment_ops import legal_topics
from kafkaops.cluster.common import java_errors
from kafkaops.cluster.common.errors import (
    AdminOperationError,
    BrokerError,
    ElectionNotNeededError,
    InvalidArgumentError,
    InvalidTopicError,
    PreferredLeaderNotAvailableError,
    RequestTimedOutError,
    UnknownTopicOrPartitionError,
    for_code,
)
from kafkaops.cluster.common.jvm_text import (
    INT_MAX,
    INT_MIN,
    java_int,
    java_string_hash,
    scala_hash_set_order,
    scala_mutable_hash_order,
    scala_set_order,
)
from kafkaops.cluster.protocol.schemas import ElectionType
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition

DEFAULT_TIMEOUT_S = 30.0
"""Kafka's tools wait 30 s for election results (`LeaderElectionCommand.main`)."""

TIMEOUT_MESSAGE = "Timeout waiting for election results"
PREFERRED_STRATEGY = "PreferredReplicaPartitionLeaderElectionStrategy"
"""The controller's strategy name in its StateChangeFailedException text (a Scala case object)."""

UNCLEAN_NEEDS_BOOTSTRAP = (
    "An unclean election needs --bootstrap-server (an ElectLeaders request to a broker): "
    "ZooKeeper has no intent znode for it"
)


def parse_election_type(text: str) -> ElectionType:
    """jopt-simple's EnumConverter: case-insensitive. Raises InvalidArgumentError with its text."""
    for member in ElectionType:
        if member.name == text.upper():
            return member
    raise InvalidArgumentError(f"Cannot parse argument '{text}' of option election-type")


# --- election files ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ElectionFileTexts:
    """Each tool's own texts for a bad election file."""

    empty: str
    missing_partitions: str
    duplicates: str


PREFERRED_REPLICA_FILE = ElectionFileTexts(
    empty="Preferred replica election data is empty",
    missing_partitions="Preferred replica election data is empty",
    duplicates="Preferred replica election data contains duplicate partitions: ",
)
LEADER_ELECTION_FILE = ElectionFileTexts(
    empty="Replica election data is empty",
    missing_partitions='Replica election data is missing "partitions" field',
    duplicates="Replica election data contains duplicate partitions: ",
)


@dataclasses.dataclass(frozen=True)
class PartitionSet:
    """A Scala 2.13 immutable `Set[TopicPartition]`: its elements in iteration order, and whether it is a
    `HashSet` (built with more than 4 elements; filtering keeps the class), which shows in `toString`."""

    items: tuple[TopicPartition, ...]
    hashed: bool

    @staticmethod
    def of(partitions: Sequence[TopicPartition]) -> PartitionSet:
        ordered = scala_set_order(partitions, topic_partition_hash)
        return PartitionSet(tuple(ordered), len(ordered) > 4)

    def partition(self, keep: Callable[[TopicPartition], bool]) -> tuple[PartitionSet, PartitionSet]:
        """Scala's `Set.partition`: both halves keep the set's class and relative order."""
        return (
            PartitionSet(tuple(p for p in self.items if keep(p)), self.hashed),
            PartitionSet(tuple(p for p in self.items if not keep(p)), self.hashed),
        )

    def __str__(self) -> str:
        return f"{'HashSet' if self.hashed else 'Set'}({', '.join(map(str, self.items))})"


def parse_election_json(text: str, texts: ElectionFileTexts) -> PartitionSet:
    """`{"partitions":[{"topic":"foo","partition":1}]}` as Kafka 2.8's election tools read it (no version).

    Text that does not parse, and an empty file, give `texts.empty` (Kafka's `Json.parseFull` answers
    None); a document without `partitions`, `texts.missing_partitions`; a partition listed twice,
    `texts.duplicates` + the duplicates (CoreUtils.duplicates order). Raises AdminOperationError,
    InvalidArgumentError (Kafka's decoder texts for a wrong shape).
    """
    if not text:
        raise AdminOperationError(texts.empty)
    if not text.strip():  # Jackson reads whitespace as a MissingNode, whose text is empty
        raise InvalidArgumentError("Expected JSON object, received ")
    document = json_object(load_json(text, texts.empty))
    if "partitions" not in document:
        raise AdminOperationError(texts.missing_partitions)
    partitions = [
        TopicPartition(json_string(json_field(fields, "topic")), json_int(json_field(fields, "partition")))
        for fields in map(json_object, json_array(document["partitions"]))
    ]
    repeated = duplicates(partitions, topic_partition_hash)
    if repeated:
        raise AdminOperationError(texts.duplicates + ",".join(map(str, repeated)))
    return PartitionSet.of(partitions)


def parse_partition_option(text: str) -> int:
    """`--partition <Integer>`: jopt-simple's conversion text for a value that is not an int."""
    if re.fullmatch(r"[+-]?[0-9]+", text, re.ASCII) and INT_MIN <= int(text) <= INT_MAX:
        return int(text)
    raise InvalidArgumentError(f"Cannot parse argument '{text}' of option partition")


# --- the result model ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ElectionResult:
    """Per partition: None (a new leader was elected) or the error Kafka's controller answers."""

    election_type: ElectionType
    results: Mapping[TopicPartition, BrokerError | None]

    @property
    def succeeded(self) -> list[TopicPartition]:
        """In the order Kafka prints them (a Scala 2.13 `mutable.Set`)."""
        return scala_mutable_hash_order((tp for tp, e in self.results.items() if e is None), topic_partition_hash)

    @property
    def not_needed(self) -> list[TopicPartition]:
        """ELECTION_NOT_NEEDED: the wanted leader already leads."""
        return scala_mutable_hash_order(
            (tp for tp, e in self.results.items() if isinstance(e, ElectionNotNeededError)), topic_partition_hash
        )

    @property
    def failed(self) -> dict[TopicPartition, BrokerError]:
        """Every other error, in the order Kafka prints them (a Scala 2.13 `mutable.Map`)."""
        errors = {
            tp: e for tp, e in self.results.items() if e is not None and not isinstance(e, ElectionNotNeededError)
        }
        return {tp: errors[tp] for tp in scala_mutable_hash_order(errors, topic_partition_hash)}


def java_exception_text(error: BrokerError) -> str:
    """Java's `Throwable.toString` of the exception Kafka's client builds for `error`, as
    kafka-leader-election prints it: `org.apache.kafka.common.errors.<Name>Exception: <message>`, the
    message being the controller's or, without one, Kafka's default text for the code."""
    return java_errors.java_exception_text(error.code, error.message)


# --- preferred elections through ZooKeeper -------------------------------------------------------


def election_znode_order(partitions: PartitionSet) -> list[TopicPartition]:
    """The order Kafka writes `/admin/preferred_replica_election`: its encoder maps the set to a set of
    `{"topic","partition"}` Java maps, iterated in insertion order (small sets) or in the hash-trie
    order of the maps' `hashCode` (sum of `key.hashCode ^ value.hashCode`)."""
    if not partitions.hashed:
        return list(partitions.items)
    topic_key, partition_key = java_string_hash("topic"), java_string_hash("partition")

    def map_hash(tp: TopicPartition) -> int:
        return java_int((topic_key ^ java_string_hash(tp.topic)) + (partition_key ^ tp.partition))

    return scala_hash_set_order(partitions.items, map_hash)


@dataclasses.dataclass(frozen=True)
class PreferredElectionStarted:
    """What kafka-preferred-replica-election (ZooKeeper mode) wrote: the partitions that exist, and the
    requested ones it skipped because they do not."""

    valid: PartitionSet
    skipped: PartitionSet


def _in_progress_error(zk: KafkaZkClient) -> AdminOperationError:
    """Kafka's text when `/admin/preferred_replica_election` exists (an earlier election is waiting)."""
    entry = zk.get(znodes.PreferredReplicaElectionZNode.path())
    # the codec returns a set: Kafka's order (znode order up to 4) is approximated by sorting
    listed = PartitionSet.of(sorted(znodes.PreferredReplicaElectionZNode.decode(entry[0]))) if entry else None
    shown = ",".join(map(str, listed.items)) if listed else ""
    return AdminOperationError(
        f"Preferred replica leader election currently in progress for {shown}. Aborting operation"
    )


def _create_election_znode(zk: KafkaZkClient, partitions: PartitionSet) -> None:
    """Raises NodeExistsError (kazoo) when an election is already waiting."""
    zk.ensure_paths([znodes.AdminZNode.path()])
    zk.create(
        znodes.PreferredReplicaElectionZNode.path(),
        znodes.PreferredReplicaElectionZNode.encode(election_znode_order(partitions)),
    )


def all_partitions(zk: KafkaZkClient) -> PartitionSet:
    """Kafka's `getAllPartitions`: the partitions the controller created (`/brokers/topics/<t>/partitions`)."""
    topics = zk.get_all_topics()
    children = zk.get_children_many(znodes.TopicPartitionsZNode.path(t) for t in topics)
    found: list[TopicPartition] = []
    for topic in topics:
        names = children[znodes.TopicPartitionsZNode.path(topic)] or []
        found.extend(TopicPartition(topic, int(p)) for p in sorted(names, key=_numeric) if p.isdigit())
    return PartitionSet.of(found)


def _numeric(name: str) -> tuple[int, str]:
    return (int(name), "") if name.isdigit() else (0, name)


def start_preferred_replica_election(zk: KafkaZkClient, requested: PartitionSet | None) -> PreferredElectionStarted:
    """Kafka 2.8 `PreferredReplicaLeaderElectionCommand.ZkCommand`: keep the requested partitions that
    exist in their topic's assignment (every partition when `requested` is None) and write them to
    `/admin/preferred_replica_election` for the controller — even when none is left, as Kafka does.

    Raises AdminOperationError (Kafka's text) if an election is already waiting; nothing is written.
    """
    if requested is None:
        valid, skipped = all_partitions(zk), PartitionSet((), False)
    else:
        assignments = zk.get_topic_assignments(legal_topics(tp.topic for tp in requested.items))
        valid, skipped = requested.partition(
            lambda tp: tp.topic in assignments and tp.partition in assignments[tp.topic].partitions
        )
    try:
        _create_election_znode(zk, valid)
    except NodeExistsError:
        raise _in_progress_error(zk) from None
    return PreferredElectionStarted(valid, skipped)


def classify_preferred(
    requested: Sequence[TopicPartition],
    assignments: Mapping[TopicPartition, ReplicaAssignment],
    leaders: Mapping[TopicPartition, int | None],
    deleting: Collection[str],
) -> tuple[dict[TopicPartition, BrokerError], list[TopicPartition]]:
    """Kafka's `processReplicaLeaderElection` before electing: unknown partitions, partitions of topics
    being deleted and partitions already led by their preferred replica get their error now; the rest
    (returned second, in request order) need an election."""
    decided: dict[TopicPartition, BrokerError] = {}
    electable = []
    for tp in requested:
        assignment = assignments.get(tp)
        if assignment is None or not assignment.replicas:
            decided[tp] = UnknownTopicOrPartitionError("The partition does not exist.", named=True)
        elif tp.topic in deleting:
            decided[tp] = InvalidTopicError("The topic is being deleted", named=True)
        elif leaders.get(tp) == assignment.replicas[0]:
            decided[tp] = ElectionNotNeededError("Leader election not needed for topic partition.")
        else:
            electable.append(tp)
    return decided, electable


def preferred_election_failure(tp: TopicPartition) -> PreferredLeaderNotAvailableError:
    """The controller's answer when the preferred replica could not take over (not alive, not in ISR)."""
    return PreferredLeaderNotAvailableError(
        f"Failed to elect leader for partition {tp} under strategy {PREFERRED_STRATEGY}"
    )


def elect_preferred_via_zookeeper(
    zk: KafkaZkClient,
    requested: PartitionSet | None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    interval_s: float = 0.2,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> ElectionResult:
    """A preferred election with ElectLeaders' answers, through `/admin/preferred_replica_election`.

    `requested` None means every partition that has a leader record, topics being deleted left out
    (Kafka's broker elects over its metadata cache, which drops a topic once its deletion starts).
    Partitions needing no election, unknown ones and those of topics being deleted are answered
    without writing; the others are written to the intent znode (after waiting for an
    earlier election's znode to go), then watched until each is led by its preferred replica or the
    controller has deleted the znode; a partition whose leader did not move then failed
    (PREFERRED_LEADER_NOT_AVAILABLE, the controller's text).

    Raises AdminOperationError(`Timeout waiting for election results`) after `timeout_s`.
    """
    deadline = clock() + timeout_s
    deleting = zk.get_topics_marked_for_deletion()
    if requested is None:
        assignments = _assignments(zk, set(zk.get_all_topics()) - deleting)
        states = zk.get_partition_states(sorted(assignments))
        targets = [tp for tp in sorted(assignments) if states[tp] is not None]
    else:
        targets = list(requested.items)
        assignments = _assignments(zk, {tp.topic for tp in targets})
        states = zk.get_partition_states([tp for tp in targets if tp in assignments])
    leaders = {tp: s.leader_and_isr.leader for tp, s in states.items() if s is not None}
    results: dict[TopicPartition, BrokerError | None] = {}
    decided, electable = classify_preferred(targets, assignments, leaders, deleting)
    results.update(decided)
    if electable:
        path = znodes.PreferredReplicaElectionZNode.path()
        while True:
            try:
                _create_election_znode(zk, PartitionSet.of(electable))
                break
            except NodeExistsError:
                if clock() >= deadline:
                    raise AdminOperationError(TIMEOUT_MESSAGE) from None
                sleep(interval_s)
        preferred = {tp: assignments[tp].replicas[0] for tp in electable}
        while True:
            now_leaders = zk.get_partition_states(electable)
            moved = {tp: s is not None and s.leader_and_isr.leader == preferred[tp] for tp, s in now_leaders.items()}
            if all(moved.values()) or not zk.exists(path):
                break
            if clock() >= deadline:
                raise AdminOperationError(TIMEOUT_MESSAGE)
            sleep(interval_s)
        if not all(moved.values()):  # the znode went before the last read: read once more
            final = zk.get_partition_states(electable)
            moved = {tp: s is not None and s.leader_and_isr.leader == preferred[tp] for tp, s in final.items()}
        for tp in electable:
            results[tp] = None if moved[tp] else preferred_election_failure(tp)
    return ElectionResult(ElectionType.PREFERRED, {tp: results[tp] for tp in targets})


def _assignments(zk: KafkaZkClient, topics: Collection[str]) -> dict[TopicPartition, ReplicaAssignment]:
    return {
        TopicPartition(topic, p): a
        for topic, found in zk.get_topic_assignments(legal_topics(topics)).items()
        for p, a in found.partitions.items()
    }


def elect_leaders_via_broker(
    bootstrap_server: str,
    election_type: ElectionType,
    partitions: PartitionSet | None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    admin_config: str | None = None,
) -> ElectionResult:
    """An ElectLeaders request (v1+: election type) to the controller through `bootstrap_server`;
    `partitions` None asks for every partition (Kafka sends null). Each partition's error code maps to
    its `errors` class (`for_code(code)(message)`), None for NONE. Any broker may be
    asked: ours forward ElectLeaders to the controller. `admin_config` is Kafka's admin client properties
    file (`client_config`: client.id, request.timeout.ms, ...; security.protocol PLAINTEXT only).

    Raises NetworkExceptionError when no broker answers, RequestTimedOutError (Kafka's "Timeout waiting
    for election results") when the controller does not answer in time."""
    # the wire client, only for this path
    from kafkaops.admin.kafka_client.client_config import open_admin_client, read_command_config

    requested = None if partitions is None else list(partitions.items)
    config = read_command_config(admin_config, "kafkaops-leader-election")
    with open_admin_client(bootstrap_server, config) as client:
        try:
            answers = client.elect_leaders(election_type, requested, timeout_ms=int(timeout_s * 1000))
        except RequestTimedOutError as error:
            raise RequestTimedOutError(TIMEOUT_MESSAGE) from error
    return ElectionResult(
        election_type,
        {
            tp: None if code == 0 else for_code(code)(message or "", named=True)
            for tp, (code, message) in answers.items()
        },
    )

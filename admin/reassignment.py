"""Kafka's reassignment JSON files: topics-to-move and reassignment (kafka-reference.md §2.3).

Operators keep the files `kafka-reassign-partitions.sh` reads and writes, and scripts grep its error
texts, so this module reads and writes them exactly as Kafka 2.8 does: the same key orders, the same
sort, the same messages (Kafka's `kafka.utils.json` decoder texts for a file of the wrong shape).
`--generate` uses it, and so do `--execute`, `--verify` and `--cancel` (`admin.reassignment_ops`).

Pure — text in, plain values out, typed errors, no files — except `read_cluster`, the one thin read
of ZooKeeper that `--generate` needs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kafkaops.admin.json_parse_errors import read_tree
from kafkaops.admin.kafka_text import duplicates, topic_partition_hash
from kafkaops.admin.kafka_text import json_array as _array
from kafkaops.admin.kafka_text import json_field as _field
from kafkaops.admin.kafka_text import json_int as _int
from kafkaops.admin.kafka_text import json_object as _object
from kafkaops.admin.kafka_text import json_string as _string
from kafkaops.admin.kafka_text import load_json as _load
from kafkaops.admin.kafka_text import node_text as _node
from kafkaops.cluster.common.errors import AdminOperationError, InvalidArgumentError, UnknownTopicOrPartitionError
from kafkaops.cluster.common.jvm_text import int_hash, java_parse_int, java_split, java_string_hash
from kafkaops.cluster.common.jvm_text import scala_list_text as _scala_list
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import TopicPartition

__all__ = [
    "ANY_LOG_DIR",
    "ReassignmentEntry",
    "check_reassignment_entries",
    "duplicates",
    "format_reassignment_json",
    "format_topics_to_move_json",
    "parse_broker_list",
    "parse_reassignment_json",
    "parse_topics_to_move_json",
]

ANY_LOG_DIR = "any"
"""`log_dirs` value meaning "wherever the broker likes": no log-directory move."""

EARLIEST_VERSION = 1


@dataclasses.dataclass(frozen=True)
class ReassignmentEntry:
    """One `partitions` element of a reassignment file, in file order (Kafka parses without dedup)."""

    partition: TopicPartition
    replicas: tuple[int, ...]
    log_dirs: tuple[str, ...]

    @property
    def log_dir_moves(self) -> dict[int, str]:
        """Broker -> log dir, for the replicas that name a directory other than `any`."""
        return {b: d for b, d in zip(self.replicas, self.log_dirs, strict=True) if d != ANY_LOG_DIR}


def _version(obj: Mapping[str, Any]) -> int:
    version = _int(obj["version"]) if "version" in obj else EARLIEST_VERSION
    if version != 1:
        raise AdminOperationError(f"Not supported version field value {version}")
    return version


# --- topics-to-move ------------------------------------------------------------------------------


def parse_topics_to_move_json(text: str) -> list[str]:
    """`{"topics":[{"topic":"foo"}],"version":1}` -> ["foo"], in file order, duplicates kept.

    Kafka 2.8 `parseTopicsData`: invalid JSON -> `The input string is not a valid JSON`; a version
    other than 1 -> `Not supported version field value <v>`; no `topics` key -> no topics. The
    duplicate check is `check_topics_to_move`'s, as in Kafka (it happens after parsing).

    Raises AdminOperationError, InvalidArgumentError (a file of the wrong shape, Kafka's decoder texts).
    """
    if not text.strip():
        raise AdminOperationError("The input string is not a valid JSON")
    document = _object(_load(text))
    _version(document)
    if "topics" not in document:
        return []
    return [_string(_field(_object(entry), "topic")) for entry in _array(document["topics"])]


def format_topics_to_move_json(topics: Iterable[str]) -> str:
    """The topics-to-move file, in the key order of Kafka's documentation example."""
    return _node({"topics": [{"topic": t} for t in topics], "version": 1})


def check_topics_to_move(topics: Sequence[str]) -> None:
    """Kafka's `List of topics to reassign contains duplicate entries: <d>` (AdminCommandFailedException)."""
    repeated = duplicates(topics, java_string_hash)
    if repeated:
        raise InvalidArgumentError(f"List of topics to reassign contains duplicate entries: {','.join(repeated)}")


# --- broker list ---------------------------------------------------------------------------------


def parse_broker_list(text: str) -> list[int]:
    """`--broker-list "0,1,2"`: Scala's `split(',').map(_.toInt)` with Java's texts, then the duplicate check.

    Java's split drops trailing empty strings; `toInt` does not trim, so `"1, 2"` fails on `" 2"`.
    Raises InvalidArgumentError (`For input string: "x"`, `Broker list contains duplicate entries: 1`).
    """
    brokers = [java_parse_int(part) for part in java_split(text, ",")]
    repeated = duplicates(brokers, int_hash)
    if repeated:
        raise InvalidArgumentError(f"Broker list contains duplicate entries: {','.join(map(str, repeated))}")
    return brokers


# --- reassignment --------------------------------------------------------------------------------


def parse_reassignment_json(text: str) -> list[ReassignmentEntry]:
    """A reassignment file (Kafka 2.8 `parsePartitionReassignmentData`), in file order, without dedup.

    `log_dirs` is optional (all `any`); when given it must be as long as `replicas`. Text that is not JSON
    gets the JSON parser's own message, with its line and column, as Kafka 2.8 passes it on
    (`json_parse_errors`); an empty file `Json.tryParseFull`'s `The input string shouldn't be empty`. No
    `partitions` key -> [].

    Raises AdminOperationError, InvalidArgumentError.
    """
    document = _object(read_tree(text))
    _version(document)
    if "partitions" not in document:
        return []
    entries = []
    for raw in _array(document["partitions"]):
        fields = _object(raw)
        tp = TopicPartition(_string(_field(fields, "topic")), _int(_field(fields, "partition")))
        replicas = tuple(_int(r) for r in _array(_field(fields, "replicas")))
        if "log_dirs" in fields:
            log_dirs = tuple(_string(d) for d in _array(fields["log_dirs"]))
        else:
            log_dirs = (ANY_LOG_DIR,) * len(replicas)
        if len(replicas) != len(log_dirs):
            raise InvalidArgumentError(
                f"Size of replicas list {_scala_list(replicas)} is different from size of log dirs list "
                f"{_scala_list(log_dirs)} for partition {tp}"
            )
        entries.append(ReassignmentEntry(tp, replicas, log_dirs))
    return entries


def check_reassignment_entries(entries: Sequence[ReassignmentEntry]) -> None:
    """The content checks of Kafka 2.8 `parseExecuteAssignmentArgs`, in its order, with its texts.

    Raises InvalidArgumentError: an empty list, an empty replica list, a partition listed twice, a
    broker listed twice in one partition.
    """
    if not entries:
        raise InvalidArgumentError("Partition reassignment list cannot be empty")
    if any(not e.replicas for e in entries):
        raise InvalidArgumentError("Partition replica list cannot be empty")
    repeated = duplicates([e.partition for e in entries], topic_partition_hash)
    if repeated:
        raise InvalidArgumentError(
            f"Partition reassignment contains duplicate topic partitions: {','.join(map(str, repeated))}"
        )
    messages = []
    for entry in entries:
        doubled = duplicates(entry.replicas, int_hash)
        if doubled:
            messages.append(f"{entry.partition} contains multiple entries for {','.join(map(str, doubled))}")
    if messages:
        raise InvalidArgumentError(f"Partition replica lists may not contain duplicate entries: {'. '.join(messages)}")


def format_reassignment_json(
    assignment: Mapping[TopicPartition, Sequence[int]] | Mapping[tuple[str, int], Sequence[int]],
    log_dirs: Mapping[tuple[TopicPartition, int], str] | None = None,
) -> str:
    """Kafka 2.8 `formatAsReassignmentJson`: compact, partitions sorted by (topic, partition), keys in
    Kafka's order, `log_dirs` always written (`any` unless `log_dirs` names a directory).

    Keys may be TopicPartition or plain (topic, partition) tuples. Written by hand rather than through
    `json.dumps` of nested dicts: a million-partition plan is tens of MB and this is several times faster.
    """
    items = sorted(((tp[0], tp[1], replicas) for tp, replicas in _key_tuples(assignment)), key=_sort_key)
    dirs = log_dirs or {}
    parts = []
    for topic, partition, replicas in items:
        name = _node(topic)
        replica_text = ",".join(map(str, replicas))
        if dirs:
            tp = TopicPartition(topic, partition)
            dir_text = ",".join(_node(dirs.get((tp, b), ANY_LOG_DIR)) for b in replicas)
        else:
            dir_text = ",".join(['"any"'] * len(replicas))
        parts.append(f'{{"topic":{name},"partition":{partition},"replicas":[{replica_text}],"log_dirs":[{dir_text}]}}')
    return '{"version":1,"partitions":[' + ",".join(parts) + "]}"


def _key_tuples(assignment: Mapping[Any, Sequence[int]]) -> Iterable[tuple[tuple[str, int], Sequence[int]]]:
    for key, replicas in assignment.items():
        if isinstance(key, TopicPartition):
            yield (key.topic, key.partition), replicas
        else:
            yield key, replicas


def _sort_key(item: tuple[str, int, Sequence[int]]) -> tuple[str, int]:
    # Kafka's compareTopicPartitions: topic (Java String order; topic names are ASCII) then partition
    return item[0], item[1]


# --- partition sizes -----------------------------------------------------------------------------


def parse_partition_sizes_json(text: str) -> dict[tuple[str, int], int]:
    """Bytes per partition, for planning by size. Two shapes are read:

    * ours: `{"version":1,"partitions":[{"topic":"foo","partition":0,"size":1048576}, ...]}`;
    * the output of `kafka-log-dirs.sh --describe` (`{"version":1,"brokers":[{"broker":0,"logDirs":
      [{"logDir":"/data","error":null,"partitions":[{"partition":"foo-0","size":1048576,
      "offsetLag":0,"isFuture":false}]}]}]}`): a partition's size is the largest of its replicas'
      (future replicas of log-dir moves left out).

    Raises AdminOperationError (not JSON), InvalidArgumentError (wrong shape, negative size).
    """
    if not text.strip():
        raise AdminOperationError("The input string is not a valid JSON")
    document = _object(_load(text))
    _version(document)
    sizes: dict[tuple[str, int], int] = {}
    if "brokers" in document:
        for broker in _array(document["brokers"]):
            for log_dir in _array(_field(_object(broker), "logDirs")):
                for entry in _array(_object(log_dir).get("partitions", [])):
                    fields = _object(entry)
                    if fields.get("isFuture") is True:
                        continue
                    name = _string(_field(fields, "partition"))
                    topic, dash, number = name.rpartition("-")
                    if not dash or not number.isdigit():
                        raise InvalidArgumentError(f"Not a topic partition: {_node(name)}")
                    key = (topic, int(number))
                    sizes[key] = max(sizes.get(key, 0), _size(_field(fields, "size")))
        return sizes
    for entry in _array(_field(document, "partitions")):
        fields = _object(entry)
        key = (_string(_field(fields, "topic")), _int(_field(fields, "partition")))
        if key in sizes:
            raise InvalidArgumentError(f"Partition sizes contain duplicate topic partitions: {key[0]}-{key[1]}")
        sizes[key] = _size(_field(fields, "size"))
    return sizes


def _size(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidArgumentError(f"Expected a size in bytes (a non-negative integer), received {_node(value)}")
    return value


# --- what --generate reads from the cluster ------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ClusterView:
    """The registered brokers (id -> rack or None), the current replicas of the topics asked for, and
    their partitions' sizes in bytes where the brokers told them (DescribeLogDirs; None from ZooKeeper)."""

    brokers: dict[int, str | None]
    assignment: dict[tuple[str, int], list[int]]
    sizes: dict[tuple[str, int], int] | None = None


def read_cluster(zk: KafkaZkClient, topics: Sequence[str]) -> ClusterView:
    """Brokers and the topics' assignments from ZooKeeper (pipelined reads). Unknown topics are left
    out; `select_current` reports them."""
    brokers = {b.broker_id: b.rack for b in zk.get_all_brokers()}
    assignment = {
        (topic, partition): list(replicas)
        for topic, found in zk.get_topic_assignments(dict.fromkeys(topics)).items()
        for partition, replicas in found.replicas.items()
    }
    return ClusterView(brokers, assignment)


def assignment_from_entries(entries: Sequence[ReassignmentEntry]) -> dict[tuple[str, int], list[int]]:
    """A current-assignment file (Kafka's reassignment JSON, as --generate prints it) as a plan input.

    Raises InvalidArgumentError with Kafka's texts for duplicates and empty lists.
    """
    check_reassignment_entries(entries)
    return {(e.partition.topic, e.partition.partition): list(e.replicas) for e in entries}


def select_current(
    assignment: Mapping[tuple[str, int], Sequence[int]], topics: Sequence[str]
) -> dict[tuple[str, int], list[int]]:
    """The partitions of `topics` (in file order); a topic with no partition is Kafka's
    `Topic <t> not found.` (the AdminClient path; the ZooKeeper path silently leaves it out).

    Raises UnknownTopicOrPartitionError.
    """
    by_topic: dict[str, list[tuple[int, Sequence[int]]]] = {}
    for (topic, partition), replicas in assignment.items():
        by_topic.setdefault(topic, []).append((partition, replicas))
    for topic in topics:
        if topic not in by_topic:
            raise UnknownTopicOrPartitionError(f"Topic {topic} not found.", named=False)
    return {(t, p): list(r) for t in topics for p, r in sorted(by_topic[t])}


def target_brokers(
    broker_list: Sequence[int],
    registered: Mapping[int, str | None] | None,
    rack_aware: bool,
    racks: Mapping[int, str] | None = None,
) -> dict[int, str | None]:
    """The target brokers and their racks (None: rack-unaware), sorted by id.

    With a cluster (`registered` given): every listed broker must be registered (Kafka silently drops
    unknown ids, which then plans onto fewer brokers than asked) and racks come from the
    registrations; without one (offline planning), from `racks`. Rack-aware with some but not all
    target brokers on a rack is Kafka's `Not all brokers have rack information...`.

    Raises InvalidArgumentError, AdminOperationError.
    """
    if registered is not None:
        unknown = [b for b in broker_list if b not in registered]
        if unknown:
            raise InvalidArgumentError(
                f"The broker list contains brokers that are not registered: {','.join(map(str, unknown))}"
            )
        racks = {b: r for b in broker_list if (r := registered[b]) is not None}
    chosen = {b: (racks or {}).get(b) if rack_aware else None for b in sorted(broker_list)}
    with_rack = sum(r is not None for r in chosen.values())
    if with_rack and with_rack != len(chosen):
        raise AdminOperationError(
            "Not all brokers have rack information. Add --disable-rack-aware in command line "
            "to make replica assignment without rack information."
        )
    return chosen


def parse_broker_racks(text: str) -> dict[int, str]:
    """`--broker-racks 0:rack-a,1:rack-b` (offline planning: racks that ZooKeeper would have told).

    Raises InvalidArgumentError.
    """
    racks: dict[int, str] = {}
    for item in text.split(","):
        broker, colon, rack = item.partition(":")
        if not colon or not rack:
            raise InvalidArgumentError(f'Invalid --broker-racks entry "{item}": expected <broker id>:<rack>')
        racks[java_parse_int(broker)] = rack
    return racks

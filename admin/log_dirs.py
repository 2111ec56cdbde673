"""The library behind `kafkaops log-dirs` and `kafkaops delete-records` (Kafka 2.8's `LogDirsCommand` and
`DeleteRecordsCommand`): the log dirs JSON document, the offset JSON file, and the orders Kafka prints them
in (through the Java and Scala hash maps its tools go through, reference §0.2). Pure functions; the calls
themselves are `kafka_client.log_dirs`.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from kafkaops.admin.kafka_client.log_dirs import LogDirDescription
from kafkaops.admin.kafka_text import (
    duplicates,
    json_array,
    json_field,
    json_int,
    json_object,
    json_string,
    load_json,
    node_text,
    topic_partition_hash,
)
from kafkaops.cluster.common.errors import AdminOperationError, InvalidArgumentError
from kafkaops.cluster.common.java_errors import java_exception_name
from kafkaops.cluster.common.jvm_text import (
    LONG_MAX,
    LONG_MIN,
    java_hash_map_order,
    java_string_hash,
    scala_mutable_hash_order,
)
from kafkaops.cluster.zk.values import TopicPartition

OFFSET_JSON_EARLIEST_VERSION = 1


class DuplicatePartitionsError(InvalidArgumentError):
    """Kafka's AdminCommandFailedException for an offset file naming a partition twice."""


# --- log-dirs --describe -------------------------------------------------------------------------------


def log_dirs_document(
    descriptions: Mapping[int, Mapping[str, LogDirDescription]], topics: Collection[str] = ()
) -> dict[str, Any]:
    """`LogDirsCommand.formatAsJson`: brokers, their dirs (error: the exception's class name, or null) and
    the logs of `topics` (all for none), in the orders Kafka's maps give them."""
    brokers = []
    for broker in scala_mutable_hash_order(descriptions):
        dirs = descriptions[broker]
        log_dirs = []
        for log_dir in java_hash_map_order(dirs, java_string_hash, len(dirs)):
            description = dirs[log_dir]
            infos = description.replica_infos
            ordered = java_hash_map_order(infos, topic_partition_hash)
            shown = [tp for tp in ordered if not topics or tp.topic in topics]
            log_dirs.append(
                {
                    "logDir": log_dir,
                    "error": None if description.error is None else java_exception_name(description.error.code),
                    "partitions": [
                        {
                            "partition": str(tp),
                            "size": infos[tp].size,
                            "offsetLag": infos[tp].offset_lag,
                            "isFuture": infos[tp].is_future,
                        }
                        for tp in scala_mutable_hash_order(shown, topic_partition_hash)
                    ],
                }
            )
        brokers.append({"broker": broker, "logDirs": log_dirs})
    return {"version": 1, "brokers": brokers}


def encode_json(document: Any) -> str:
    """Kafka's `Json.encodeAsString` (Jackson): compact, non-ASCII kept."""
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)


def parse_list_option(text: str) -> list[str]:
    """`split(",").filter(!_.isEmpty)`, as LogDirsCommand reads --topic-list and --broker-list."""
    return [item for item in text.split(",") if item]


# --- delete-records --offset-json-file -------------------------------------------------------------


def json_long(value: Any) -> int:
    """Jackson's `to[Long]`: an integral number that fits a Java long."""
    if isinstance(value, bool) or not isinstance(value, int) or not LONG_MIN <= value <= LONG_MAX:
        raise InvalidArgumentError(f"Expected `Long` value, received {node_text(value)}")
    return value


def parse_offset_json(text: str) -> list[tuple[TopicPartition, int]]:
    """`DeleteRecordsCommand.parseOffsetJsonStringWithoutDedup`: `{"partitions":[{"topic":..,"partition":..,
    "offset":..}],"version":1}` (version 1 if absent). Raises AdminOperationError (not JSON, no
    partitions, another version) and InvalidArgumentError (a field missing or of the wrong type), with
    Kafka's texts."""
    root = json_object(load_json(text))
    version = json_int(root["version"]) if "version" in root else OFFSET_JSON_EARLIEST_VERSION
    if version != 1:
        raise AdminOperationError(f"Not supported version field value {version}")
    if "partitions" not in root:
        raise AdminOperationError("Missing partitions field")
    entries = []
    for item in json_array(root["partitions"]):
        partition = json_object(item)
        topic = json_string(json_field(partition, "topic"))
        entries.append(
            (
                TopicPartition(topic, json_int(json_field(partition, "partition"))),
                json_long(json_field(partition, "offset")),
            )
        )
    return entries


def records_to_delete(text: str) -> dict[TopicPartition, int]:
    """The offset file's partitions and offsets. Raises as `parse_offset_json`, and
    DuplicatePartitionsError with Kafka's text for a partition named twice."""
    entries = parse_offset_json(text)
    repeated = duplicates((tp for tp, _ in entries), topic_partition_hash)
    if repeated:
        raise DuplicatePartitionsError(
            "Offset json file contains duplicate topic partitions: " + ",".join(map(str, repeated))
        )
    return dict(entries)


def delete_records_order(partitions: Iterable[TopicPartition]) -> list[TopicPartition]:
    """The order of `DeleteRecordsResult.lowWatermarks` (`new HashMap<>(futures)`), as Kafka prints it."""
    unique = list(dict.fromkeys(partitions))
    futures = java_hash_map_order(unique, topic_partition_hash, len(unique))
    return java_hash_map_order(futures, topic_partition_hash, int(len(unique) / 0.75 + 1))

"""What Kafka's admin tools print that comes from Kafka's own helpers rather than from their code.

Shared by the reassignment and election tools:

* Kafka's JSON decoder (`kafka.utils.json`): the texts it raises for a file of the wrong shape;
* `TopicPartition.hashCode` and `CoreUtils.duplicates`, which order what the tools print through the
  Scala 2.13 collections of the floor's `jvm_text` (reference §0.2).

The JVM's own text and orders (`scala_set_order`, `scala_list_text`, ...) are the floor's
`kafkaops.cluster.common.jvm_text`. Pure functions, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypeVar

from kafkaops.cluster.common.errors import AdminOperationError, InvalidArgumentError
from kafkaops.cluster.common.jvm_text import (
    INT_MAX,
    INT_MIN,
    java_int,
    java_string_hash,
    scala_hash_set_order,
)
from kafkaops.cluster.zk.values import TopicPartition

T = TypeVar("T", bound=Hashable)


# --- Kafka's JSON decoder (`kafka.utils.json`), with its texts -------------------------------------


def node_text(value: Any) -> str:
    """Jackson's `JsonNode.toString`: compact JSON, as Kafka's decoder messages print the node."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def load_json(text: str, invalid_message: str = "The input string is not a valid JSON") -> Any:
    """`json.loads` with Kafka's text for what Jackson cannot parse (AdminOperationException)."""
    try:
        return json.loads(text)
    except ValueError:  # JSONDecodeError and a few malformed-number cases
        raise AdminOperationError(invalid_message) from None


def json_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidArgumentError(f"Expected JSON object, received {node_text(value)}")
    return value


def json_array(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidArgumentError(f"Expected JSON array, received {node_text(value)}")
    return value


def json_field(obj: Mapping[str, Any], name: str) -> Any:
    if name not in obj:
        raise InvalidArgumentError(f"No such field exists: `{name}`")
    return obj[name]


def json_int(value: Any) -> int:
    """Jackson's `isInt`: an integral number that fits a Java int (not a bool, not 1.0)."""
    if isinstance(value, bool) or not isinstance(value, int) or not INT_MIN <= value <= INT_MAX:
        raise InvalidArgumentError(f"Expected `Int` value, received {node_text(value)}")
    return value


def json_string(value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"Expected `String` value, received {node_text(value)}")
    return value


# --- Java hash codes -----------------------------------------------------------------------------


def topic_partition_hash(tp: TopicPartition) -> int:
    """`org.apache.kafka.common.TopicPartition.hashCode` as a signed 32-bit int."""
    return java_int(31 * (31 + tp.partition) + java_string_hash(tp.topic))


# --- Kafka's helpers ----------------------------------------------------------------------------


def duplicates(values: Iterable[T], hash_code: Callable[[T], int]) -> list[T]:
    """Kafka's `CoreUtils.duplicates`: values seen more than once, in the order Kafka prints them.

    Kafka groups with `groupBy`, which (Scala 2.13) builds an immutable HashMap, so the order is the
    CHAMP trie order of the values' Java hash codes (`hash_code`), whatever the number of entries.
    """
    seen: dict[T, int] = {}
    for value in values:
        seen[value] = seen.get(value, 0) + 1
    repeated = [v for v, n in seen.items() if n > 1]
    if len(repeated) <= 1:
        return repeated
    return scala_hash_set_order(repeated, hash_code)

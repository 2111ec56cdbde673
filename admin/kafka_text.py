"""What Kafka's admin tools print that comes from Scala and Jackson rather than from their own code.

Two families of facts, shared by the reassignment and election tools:

* Kafka's JSON decoder (`kafka.utils.json`): the texts it raises for a file of the wrong shape;
* the iteration order and `toString` of the Scala 2.13 collections whose contents end up in a message
  or a znode (reference §0.2): immutable sets and maps (insertion order up to 4 entries, CHAMP trie order
  of the improved hash codes beyond), mutable hash sets and maps (bucket order), `Set(...)`/`List(...)`.

The orders are computed from Java hash codes (`String.hashCode`, `TopicPartition.hashCode`, ...), with
`cluster/zk/jvm_order` doing the trie and bucket arithmetic; this module adapts them to any value with a
known Java hash code. Pure functions, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from kafkaops.cluster.errors import AdminOperationError, InvalidArgumentError
from kafkaops.cluster.zk.jvm_order import java_string_hash, scala_hash_set_order, scala_mutable_hash_order
from kafkaops.cluster.zk.values import TopicPartition

T = TypeVar("T", bound=Hashable)

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1
_SMALL_COLLECTION = 4
"""Scala's `Set1`..`Set4` / `Map1`..`Map4` keep insertion order; a fifth element makes a hash trie."""


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


def _signed(h: int) -> int:
    h &= 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def topic_partition_hash(tp: TopicPartition) -> int:
    """`org.apache.kafka.common.TopicPartition.hashCode` as a signed 32-bit int."""
    return _signed(31 * (31 + tp.partition) + java_string_hash(tp.topic))


def int_hash(value: int) -> int:
    """`Int.##` (and `java.lang.Integer.hashCode`): the value itself."""
    return value


# --- Scala 2.13 collection orders ----------------------------------------------------------------


def _by_hash(values: Iterable[T], hash_code: Callable[[T], int]) -> dict[int, list[T]]:
    by_hash: dict[int, list[T]] = {}
    for value in values:
        by_hash.setdefault(hash_code(value), []).append(value)
    return by_hash


def scala_hash_order(values: Iterable[T], hash_code: Callable[[T], int]) -> list[T]:
    """Iteration order of a Scala 2.13 immutable `HashSet` / `HashMap` keys (CHAMP trie), any size."""
    by_hash = _by_hash(dict.fromkeys(values), hash_code)
    return [v for h in scala_hash_set_order(by_hash) for v in by_hash[h]]


def scala_set_order(values: Iterable[T], hash_code: Callable[[T], int]) -> list[T]:
    """An immutable `Set` (or `Map` keys, `Seq.toSet`, `Seq.toMap`) built from `values` in this order:
    insertion order up to 4 distinct elements, hash-trie order beyond."""
    distinct = list(dict.fromkeys(values))
    return distinct if len(distinct) <= _SMALL_COLLECTION else scala_hash_order(distinct, hash_code)


def scala_mutable_order(values: Iterable[T], hash_code: Callable[[T], int]) -> list[T]:
    """A Scala 2.13 `mutable.HashSet` / `mutable.HashMap` keys filled with `values` (bucket order)."""
    by_hash = _by_hash(dict.fromkeys(values), hash_code)
    return [v for h in scala_mutable_hash_order(by_hash) for v in by_hash[h]]


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
    return scala_hash_order(repeated, hash_code)


def scala_set_text(values: Sequence[object]) -> str:
    """Scala 2.13 `Set#toString` of a set already in its iteration order: `Set(a, b)` up to 4
    elements, `HashSet(a, b, ...)` beyond."""
    name = "Set" if len(values) <= _SMALL_COLLECTION else "HashSet"
    return f"{name}({', '.join(map(str, values))})"


def scala_list_text(values: Sequence[object]) -> str:
    """Scala's `List(1, 2)` (Kafka decodes JSON arrays into immutable Seqs, i.e. Lists)."""
    return f"List({', '.join(map(str, values))})"

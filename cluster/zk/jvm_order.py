"""Iteration orders of the JVM hash maps whose order shows in Kafka's bytes and texts (reference §0.2).

Kafka prints topic configs from a `java.util.HashMap` (`kafka-topics --describe`) or a
`java.util.Properties` (`kafka-configs --describe`, the config znode's JSON), so reproducing their
order byte for byte means reproducing Java's hashing. Java 9+ (Kafka 2.x runs on JDK 11/17).
"""

from __future__ import annotations

from collections.abc import Iterable


def java_string_hash(text: str) -> int:
    """`String.hashCode` over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    for unit in text.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _spread(h: int) -> int:
    h &= 0xFFFFFFFF
    return (h ^ (h >> 16)) & 0x7FFFFFFF


def java_hash_order(keys: Iterable[str], resize_at_size: int = 13) -> list[str]:
    """Keys in the iteration order of a default-capacity Java hash table filled in the given order.

    The table starts at 16 buckets and doubles once it holds `resize_at_size` entries per 16
    buckets: 13 (`HashMap`, resize when size > 0.75n) or 12 (`ConcurrentHashMap(8)` behind
    `Properties`, resize when size reaches 0.75n). Buckets iterate from 0 up; inside a bucket,
    entries keep insertion order (resizes split buckets without reordering).
    """
    ordered = list(dict.fromkeys(keys))
    capacity = 16
    while len(ordered) >= resize_at_size * capacity // 16:
        capacity *= 2
    position = {key: i for i, key in enumerate(ordered)}
    return sorted(ordered, key=lambda k: (_spread(java_string_hash(k)) & (capacity - 1), position[k]))


def properties_order(keys: Iterable[str]) -> list[str]:
    """`java.util.Properties` (a `ConcurrentHashMap(8)` on Java 9+)."""
    return java_hash_order(keys, resize_at_size=12)


def hash_map_order(keys: Iterable[str]) -> list[str]:
    """`java.util.HashMap` with the default capacity."""
    return java_hash_order(keys, resize_at_size=13)

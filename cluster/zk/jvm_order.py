"""Iteration orders of the JVM hash maps whose order shows in Kafka's bytes and texts (reference §0.2).

Kafka prints topic configs from a `java.util.HashMap` (`kafka-topics --describe`) or a
`java.util.Properties` (`kafka-configs --describe`, the config znode's JSON), so reproducing their
order byte for byte means replaying Java's tables: the same hashing, the same resize points and the
same way each resize splits a bucket. Java 9+ (Kafka 2.x runs on JDK 11/17). Trees (buckets of 8+
colliding keys) are not modelled: their iteration keeps the list order for the key counts configs have.
"""

from __future__ import annotations

from collections.abc import Iterable


def java_string_hash(text: str) -> int:
    """`String.hashCode` over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    encoded = text.encode("utf-16-be")
    for i in range(0, len(encoded), 2):
        h = (31 * h + (encoded[i] << 8 | encoded[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _spread(text: str) -> int:
    h = java_string_hash(text) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & 0x7FFFFFFF


def hash_map_order(keys: Iterable[str]) -> list[str]:
    """`java.util.HashMap` (capacity 16): append to the bucket's tail, resize after the size passes
    0.75·n, and split each bucket into its low and high halves keeping their order."""
    table: list[list[str]] = [[] for _ in range(16)]
    for size, key in enumerate(dict.fromkeys(keys), start=1):
        table[_spread(key) & (len(table) - 1)].append(key)
        if size > len(table) * 3 // 4:
            table = _split(table, reverse_prefix=False)
    return [key for bucket in table for key in bucket]


def properties_order(keys: Iterable[str]) -> list[str]:
    """`java.util.Properties` = `ConcurrentHashMap(8)`: table 16, resize once the count reaches
    0.75·n, and `transfer` keeps each bucket's last run of same-half keys in order while the keys
    before it come out reversed."""
    table: list[list[str]] = [[] for _ in range(16)]
    for count, key in enumerate(dict.fromkeys(keys), start=1):
        table[_spread(key) & (len(table) - 1)].append(key)
        if count >= len(table) * 3 // 4:
            table = _split(table, reverse_prefix=True)
    return [key for bucket in table for key in bucket]


def _split(table: list[list[str]], reverse_prefix: bool) -> list[list[str]]:
    n = len(table)
    grown: list[list[str]] = [[] for _ in range(2 * n)]
    for index, bucket in enumerate(table):
        if not bucket:
            continue
        if not reverse_prefix:
            for key in bucket:
                grown[index + (n if _spread(key) & n else 0)].append(key)
            continue
        # ConcurrentHashMap.transfer: find lastRun (the longest tail going to one half), then push
        # every earlier node onto the head of its half's list.
        run_start = len(bucket) - 1
        run_bit = _spread(bucket[-1]) & n
        while run_start > 0 and _spread(bucket[run_start - 1]) & n == run_bit:
            run_start -= 1
        low: list[str] = []
        high: list[str] = []
        (high if run_bit else low).extend(bucket[run_start:])
        for key in bucket[:run_start]:
            (high if _spread(key) & n else low).insert(0, key)
        grown[index] = low
        grown[index + n] = high
    return grown

"""Iteration orders of the JVM collections whose order shows in Kafka's bytes and texts (reference §0.2).

Java's hash maps (below) and Scala 2.13's integer sets (at the end): the one place that knows them.

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


# --- Scala 2.13 collections of Ints (reference §0.2 rules 2 and 4) -------------------------------------

_INT_MASK = 0xFFFFFFFF


def _scala_improve(i: int) -> int:
    """`scala.collection.Hashing.improve` of `Int.##` (the int itself), as immutable hash sets use it."""
    h = i & _INT_MASK
    h = (h + (~(h << 9) & _INT_MASK)) & _INT_MASK
    h ^= h >> 14
    h = (h + (h << 4)) & _INT_MASK
    return (h ^ (h >> 10)) & _INT_MASK


def scala_hash_set_order(values: Iterable[int]) -> list[int]:
    """Iteration order of a Scala 2.13 immutable `HashSet[Int]` (or `HashMap[Int, _]` keys): a CHAMP trie
    splits the improved hash into 5-bit fragments from the low end, and each node lists its lone
    entries (by fragment) before the entries of its sub-nodes."""

    def walk(entries: list[tuple[int, int]], shift: int) -> list[int]:
        if shift >= 32:  # unreachable for distinct ints (improve is a bijection)
            return [v for _, v in entries]
        groups: dict[int, list[tuple[int, int]]] = {}
        for entry in entries:
            groups.setdefault((entry[0] >> shift) & 31, []).append(entry)
        ordered = [groups[f] for f in sorted(groups)]
        return [g[0][1] for g in ordered if len(g) == 1] + [
            v for g in ordered if len(g) > 1 for v in walk(g, shift + 5)
        ]

    return walk([(_scala_improve(v), v) for v in dict.fromkeys(values)], 0)


def scala_set_order(values: Iterable[int]) -> list[int]:
    """A Scala immutable `Set[Int]` built in this order: insertion order up to 4 elements (`Set1`..`Set4`),
    hash-trie order beyond."""
    distinct = list(dict.fromkeys(values))
    return distinct if len(distinct) <= 4 else scala_hash_set_order(distinct)


def scala_mutable_hash_order(ids: Iterable[int]) -> list[int]:
    """Iteration order of a Scala 2.13 `mutable.HashSet[Int]` / `HashMap[Int, _]` keys filled with `ids`.

    Bucket = `(h ^ (h >>> 16)) & (capacity - 1)`, buckets in ascending order, entries sorted by hash
    inside a bucket; the table starts at 16 and doubles before the insert that would reach 0.75 of it.
    A table that once held more elements keeps its larger capacity in Kafka; here the capacity follows
    the current size (identical for clusters under 12 brokers).
    """
    unique = list(dict.fromkeys(ids))
    capacity = 16
    while len(unique) >= capacity * 3 // 4:
        capacity *= 2

    def improved(i: int) -> int:
        h = i & _INT_MASK
        h ^= h >> 16
        return h - (1 << 32) if h >= 1 << 31 else h

    return sorted(unique, key=lambda i: (improved(i) & (capacity - 1), improved(i)))

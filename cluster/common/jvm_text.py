"""What the JVM does to text and collections where it shows in Kafka's bytes and messages (reference §0.2).

One function per JVM behaviour, matching Java 11/17 and Scala 2.13 (the default build of Kafka 2.8):

* Java's numbers and strings: `Integer.parseInt` / `Long.parseLong` (an optional sign, any Unicode
  decimal digits, NumberFormatException's text), `String.trim`, `String.split` (a regex; trailing
  empty strings dropped), `Double.toString`, `String.hashCode`, `List.toString`, booleans;
* the iteration orders of the hash tables whose contents Kafka prints or writes: `java.util.HashMap`
  and `java.util.Properties` of strings, Scala's immutable `Set`/`Map` (insertion order up to 4
  elements, CHAMP trie order of the improved hash codes beyond) and `mutable.HashSet`/`HashMap`;
* Scala's `toString` of those collections: `Set(...)` / `HashSet(...)`, `Map(k -> v)` / `HashMap(...)`,
  `List(...)`.

A Scala collection order takes the elements' Java hash code as `hash_code`; without one the elements
are Ints, whose hash code is the value itself. Pure functions, no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import TypeVar, cast, overload

from kafkaops.cluster.common.errors import NumberFormatError

T = TypeVar("T", bound=Hashable)
HashCode = Callable[[T], int]

SHORT_MAX = 2**15 - 1
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
_INT_MASK = 0xFFFFFFFF
SMALL_SET_SIZE = 4
"""Scala's `Set1`..`Set4` / `Map1`..`Map4` keep insertion order; a fifth element makes a hash trie."""


# --- Java numbers and strings --------------------------------------------------------------------

_JAVA_INTEGER = re.compile(r"[+-]?\d+")  # Unicode \d: Character.digit accepts every decimal digit (Nd)
_JAVA_WHITESPACE = "".join(map(chr, range(0x21)))  # String.trim: every char <= U+0020


def java_parse_int(text: str) -> int:
    """`Integer.parseInt`: an optional `+`/`-`, then decimal digits (any script's), within an int.

    Raises NumberFormatError with Java's text, `For input string: "<text>"`."""
    return _parse_integer(text, INT_MIN, INT_MAX)


def java_parse_long(text: str) -> int:
    """`Long.parseLong`: as `java_parse_int`, within a long. Raises NumberFormatError."""
    return _parse_integer(text, LONG_MIN, LONG_MAX)


def _parse_integer(text: str, low: int, high: int) -> int:
    if _JAVA_INTEGER.fullmatch(text):
        digits = text.lstrip("+-")
        if len(digits) > 20:  # leading zeros Java skips; Python's int() refuses very long text
            digits = "".join(str(unicodedata.decimal(d)) for d in digits).lstrip("0") or "0"
        if len(digits) <= 20:
            value = -int(digits) if text[0] == "-" else int(digits)
            if low <= value <= high:
                return value
    raise NumberFormatError(f'For input string: "{text}"')


def java_trim(text: str) -> str:
    """`String.trim`: strips every char up to U+0020 (controls included, no-break space kept)."""
    return text.strip(_JAVA_WHITESPACE)


def java_split(text: str, regex: str | re.Pattern[str]) -> list[str]:
    """`String.split(regex)` (limit 0), also `Pattern.split`.

    The regex is a regex: a string is compiled with `re.ASCII`, as Java's `\\s`, `\\d`, `\\w` are ASCII.
    Text without a match gives `[text]` (so `""` gives `[""]`); trailing empty strings are dropped (so
    `","` gives `[]`); a zero-width match at the start gives no leading empty string, a real one does
    (`",a"` gives `["", "a"]`); groups in the regex are not returned.
    """
    pattern = re.compile(regex, re.ASCII) if isinstance(regex, str) else regex
    if pattern.groups:
        parts = _split_without_groups(text, pattern)
    else:
        parts = pattern.split(text)
        if len(parts) > 1 and not parts[0] and (first := pattern.match(text)) is not None and first.end() == 0:
            del parts[0]
    if len(parts) == 1:
        return parts
    while parts and not parts[-1]:
        parts.pop()
    return parts


def _split_without_groups(text: str, pattern: re.Pattern[str]) -> list[str]:
    parts: list[str] = []
    index = 0
    for match in pattern.finditer(text):
        if index == 0 and match.start() == 0 and match.end() == 0:
            continue
        parts.append(text[index : match.start()])
        index = match.end()
    if index == 0:
        return [text]
    parts.append(text[index:])
    return parts


def java_boolean_text(value: bool) -> str:
    """`String.valueOf(boolean)`."""
    return "true" if value else "false"


def java_list_text(values: Iterable[object]) -> str:
    """`java.util.List.toString` (also generated messages' `MessageUtil.deepToString`): `[1, 2]`."""
    return "[" + ", ".join(map(str, values)) + "]"


def java_double_string(value: float) -> str:
    """`Double.toString`: plain between 1e-3 and 1e7 (`0.5`, `10.0`), else computerized scientific
    notation (`1.0E7`, `1.0E-4`), from the shortest digits that round-trip."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        text = repr(float(value))
        return text if ("." in text or "e" in text) else text + ".0"
    sign, digits, exponent = Decimal(repr(float(value))).as_tuple()
    shown = "".join(map(str, digits)).rstrip("0") or "0"
    power = len(digits) + int(exponent) - 1
    return f"{'-' if sign else ''}{shown[0]}.{shown[1:] or '0'}E{power}"


# --- Java hash codes and hash tables -------------------------------------------------------------


def java_int(value: int) -> int:
    """Java's int arithmetic: the low 32 bits of `value` as a signed int (what an overflowing hash is)."""
    value &= _INT_MASK
    return value - (1 << 32) if value > INT_MAX else value


def java_string_hash(text: str) -> int:
    """`String.hashCode` over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    encoded = text.encode("utf-16-be")
    for i in range(0, len(encoded), 2):
        h = (31 * h + (encoded[i] << 8 | encoded[i + 1])) & _INT_MASK
    return java_int(h)


def int_hash(value: int) -> int:
    """`Int.##` (and `java.lang.Integer.hashCode`): the value itself."""
    return value


def _hash_code(hash_code: HashCode[T] | None) -> HashCode[T]:
    """The elements' hash code function; without one they are Ints, their own hash codes."""
    return hash_code if hash_code is not None else cast(HashCode[T], int_hash)


def _spread(text: str) -> int:
    h = java_string_hash(text) & _INT_MASK
    return (h ^ (h >> 16)) & 0x7FFFFFFF


def hash_map_order(keys: Iterable[str]) -> list[str]:
    """`java.util.HashMap` of strings (capacity 16): append to the bucket's tail, resize after the size
    passes 0.75·n, and split each bucket into its low and high halves keeping their order. Trees (buckets
    of 8+ colliding keys) are not modelled: their iteration keeps the list order for the key counts
    configs have."""
    table: list[list[str]] = [[] for _ in range(16)]
    for size, key in enumerate(dict.fromkeys(keys), start=1):
        table[_spread(key) & (len(table) - 1)].append(key)
        if size > len(table) * 3 // 4:
            table = _split(table, reverse_prefix=False)
    return [key for bucket in table for key in bucket]


def java_hash_map_order(keys: Iterable[T], hash_code: HashCode[T], initial_capacity: int = 16) -> list[T]:
    """`java.util.HashMap` iteration order of any keys with Java hash codes, filled in this order into a map
    made with `initial_capacity` (`new HashMap<>(n)`; `new HashMap<>(map)` of s entries is
    `int(s / 0.75 + 1)`): buckets `(h ^ (h >>> 16)) & (n - 1)` in ascending order, a bucket's keys in
    insertion order (a resize splits buckets keeping it). Trees of 8+ colliding keys are not modelled."""
    unique = list(dict.fromkeys(keys))
    capacity = 1
    while capacity < initial_capacity:
        capacity *= 2
    for size in range(1, len(unique) + 1):
        if size > capacity * 3 // 4:
            capacity *= 2

    def bucket(key: T) -> int:
        h = hash_code(key) & _INT_MASK
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(unique, key=bucket)


def properties_order(keys: Iterable[str]) -> list[str]:
    """`java.util.Properties` (Java 9+: a `ConcurrentHashMap(8)`): table 16, resize once the count
    reaches 0.75·n, and `transfer` keeps each bucket's last run of same-half keys in order while the
    keys before it come out reversed. Kafka prints topic configs in this order."""
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


# --- Scala 2.13 collection orders ----------------------------------------------------------------


def _scala_improve(hash_code: int) -> int:
    """`scala.collection.Hashing.improve` of `##`, as the immutable hash sets and maps use it."""
    h = hash_code & _INT_MASK
    h = (h + (~(h << 9) & _INT_MASK)) & _INT_MASK
    h ^= h >> 14
    h = (h + (h << 4)) & _INT_MASK
    return (h ^ (h >> 10)) & _INT_MASK


@overload
def scala_hash_set_order(values: Iterable[int]) -> list[int]: ...
@overload
def scala_hash_set_order(values: Iterable[T], hash_code: HashCode[T]) -> list[T]: ...
def scala_hash_set_order(values: Iterable[T], hash_code: HashCode[T] | None = None) -> list[T]:
    """Iteration order of a Scala 2.13 immutable `HashSet` (or `HashMap` keys, `groupBy`), any size.

    A CHAMP trie splits the improved hash into 5-bit fragments from the low end; each node lists its
    lone entries (by fragment) before the entries of its sub-nodes, depth first. Elements with equal
    hash codes end in one collision node, in insertion order."""
    code = _hash_code(hash_code)

    def walk(entries: list[tuple[int, T]], shift: int) -> list[T]:
        if shift >= 32:  # a collision node: equal hash codes
            return [v for _, v in entries]
        groups: dict[int, list[tuple[int, T]]] = {}
        for entry in entries:
            groups.setdefault((entry[0] >> shift) & 31, []).append(entry)
        ordered = [groups[f] for f in sorted(groups)]
        return [g[0][1] for g in ordered if len(g) == 1] + [
            v for g in ordered if len(g) > 1 for v in walk(g, shift + 5)
        ]

    return walk([(_scala_improve(code(v)), v) for v in dict.fromkeys(values)], 0)


@overload
def scala_set_order(values: Iterable[int]) -> list[int]: ...
@overload
def scala_set_order(values: Iterable[T], hash_code: HashCode[T]) -> list[T]: ...
def scala_set_order(values: Iterable[T], hash_code: HashCode[T] | None = None) -> list[T]:
    """A Scala immutable `Set` (or `Map` keys, `Seq.toSet`, `Seq.toMap`) built by adding `values` in this
    order: insertion order up to 4 distinct elements, hash-trie order beyond."""
    distinct = list(dict.fromkeys(values))
    if len(distinct) <= SMALL_SET_SIZE:
        return distinct
    code: HashCode[T] = _hash_code(hash_code)
    return scala_hash_set_order(distinct, code)


@overload
def scala_mutable_hash_order(values: Iterable[int]) -> list[int]: ...
@overload
def scala_mutable_hash_order(values: Iterable[T], hash_code: HashCode[T]) -> list[T]: ...
def scala_mutable_hash_order(values: Iterable[T], hash_code: HashCode[T] | None = None) -> list[T]:
    """Iteration order of a Scala 2.13 `mutable.HashSet` / `mutable.HashMap` keys filled with `values`.

    Bucket = `(h ^ (h >>> 16)) & (capacity - 1)`, buckets in ascending order, entries sorted by that
    (signed) hash inside a bucket, equal hashes in insertion order; the table starts at 16 and doubles
    before the insert that would reach 0.75 of it. A table that once held more elements keeps its
    larger capacity in Kafka; here the capacity follows the current size (identical for clusters under
    12 brokers).
    """
    code = _hash_code(hash_code)
    unique = list(dict.fromkeys(values))
    capacity = 16
    while len(unique) >= capacity * 3 // 4:
        capacity *= 2

    def improved(value: T) -> int:
        h = code(value) & _INT_MASK
        return java_int(h ^ (h >> 16))

    keyed = [(improved(v), v) for v in unique]
    keyed.sort(key=lambda entry: (entry[0] & (capacity - 1), entry[0]))
    return [v for _, v in keyed]


# --- Scala 2.13 toString -------------------------------------------------------------------------


def scala_set_text(ordered: Sequence[object]) -> str:
    """`toString` of an immutable Set whose iteration order is `ordered`: `Set(a, b)` up to 4
    elements, `HashSet(a, b, ...)` beyond."""
    name = "Set" if len(ordered) <= SMALL_SET_SIZE else "HashSet"
    return f"{name}({', '.join(map(str, ordered))})"


@overload
def scala_immutable_set(values: Iterable[int]) -> str: ...
@overload
def scala_immutable_set(values: Iterable[T], hash_code: HashCode[T]) -> str: ...
def scala_immutable_set(values: Iterable[T], hash_code: HashCode[T] | None = None) -> str:
    """`toString` of a Scala 2.13 immutable `Set` built by adding `values` in this order, at any size:
    `Set(...)` in insertion order up to 4 elements, else `HashSet(...)` in hash-trie order."""
    ordered: list[T] = scala_set_order(values, _hash_code(hash_code))
    return scala_set_text(ordered)


@overload
def scala_mutable_hash_set(values: Iterable[int]) -> str: ...
@overload
def scala_mutable_hash_set(values: Iterable[T], hash_code: HashCode[T]) -> str: ...
def scala_mutable_hash_set(values: Iterable[T], hash_code: HashCode[T] | None = None) -> str:
    """`toString` of a Scala 2.13 `mutable.HashSet` filled with `values` (Kafka's
    `updateMetadataRequestBrokerSet`): `HashSet(...)` at every size, in bucket order."""
    code: HashCode[T] = _hash_code(hash_code)
    ordered = scala_mutable_hash_order(values, code)
    return "HashSet(" + ", ".join(map(str, ordered)) + ")"


def scala_map_text(entries: Iterable[tuple[object, object]], name: str = "Map") -> str:
    """`toString` of a Scala Map whose iteration order is `entries`: `Map(1 -> a, 2 -> b)`; `name` is
    the class's own (`Map`, `HashMap`, `LinkedHashMap`)."""
    return f"{name}(" + ", ".join(f"{k} -> {v}" for k, v in entries) + ")"


@overload
def scala_immutable_map(mapping: Mapping[int, object]) -> str: ...
@overload
def scala_immutable_map(mapping: Mapping[T, object], hash_code: HashCode[T]) -> str: ...
def scala_immutable_map(mapping: Mapping[T, object], hash_code: HashCode[T] | None = None) -> str:
    """`toString` of a Scala 2.13 immutable `Map` built by adding `mapping`'s entries in order: `Map(...)`
    in insertion order up to 4 entries, else `HashMap(...)` in the hash-trie order of the keys."""
    keys: list[T] = scala_set_order(mapping, _hash_code(hash_code))
    return scala_map_text(((k, mapping[k]) for k in keys), "Map" if len(keys) <= SMALL_SET_SIZE else "HashMap")


def scala_list_text(values: Iterable[object]) -> str:
    """`toString` of a Scala `List` / `Seq` (Kafka decodes JSON arrays into Lists): `List(1, 2)`."""
    return "List(" + ", ".join(map(str, values)) + ")"

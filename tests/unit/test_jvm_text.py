"""The JVM behaviours of the floor's `jvm_text` (kafka-reference.md §0.2).

Every expected value below was printed by the JVM: OpenJDK 17 for Java (`java.util.Properties` /
`java.util.HashMap` filled in the given order, then `keySet()` iterated; `Integer.parseInt`,
`String.split`, `String.trim`), Scala 2.13 (scala-library 2.13.18) for `Set`, `mutable.HashSet` and
`List`; the comments show how each follows from the algorithm.
"""

from __future__ import annotations

import pytest

from kafkaops.cluster.common.errors import InvalidArgumentError, NumberFormatError
from kafkaops.cluster.common.jvm_text import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    hash_map_order,
    java_boolean_text,
    java_int,
    java_list_text,
    java_parse_int,
    java_parse_long,
    java_split,
    java_string_hash,
    java_trim,
    properties_order,
    scala_hash_set_order,
    scala_immutable_map,
    scala_immutable_set,
    scala_list_text,
    scala_map_text,
    scala_mutable_hash_order,
    scala_mutable_hash_set,
    scala_set_order,
    scala_set_text,
)

# --- String.hashCode -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 97),
        ("hello", 99162322),
        ("Aa", 2112),  # 65*31 + 97
        ("BB", 2112),  # 66*31 + 66: the classic collision
        ("retention.ms", -1339220362),  # wraps past 2^31: signed result
        ("polygenelubricants", -(2**31)),  # exactly Integer.MIN_VALUE
        ("\U0001f600", 1772899),  # UTF-16 surrogates: 0xD83D*31 + 0xDE00, not the code point 0x1F600
        ("\u00e9", 233),  # one UTF-16 unit, not the two UTF-8 bytes
    ],
)
def test_java_string_hash_known_values(text: str, expected: int) -> None:
    assert java_string_hash(text) == expected


def test_java_int_wraps_as_java_does() -> None:
    values = (0, INT_MAX, INT_MAX + 1, -1, 2**32 + 5, INT_MIN - 1)
    assert [java_int(v) for v in values] == [0, INT_MAX, INT_MIN, -1, 5, INT_MAX]


# --- order of a few keys, by hand -------------------------------------------------------------------
#
# Both maps put a key in bucket (h ^ (h >>> 16)) & (n - 1) of an n = 16 table and iterate buckets 0 -> 15,
# keeping insertion order inside a bucket (until a resize, see below).
#   "q"             h = 113 = 0x71        -> spread 0x71            -> bucket 1
#   "a"             h = 97  = 0x61        -> spread 0x61            -> bucket 1
#   "b"             h = 98  = 0x62        -> spread 0x62            -> bucket 2
#   "segment.bytes" h = 0x876BD9F0 -> h ^ (h >>> 16) = 0x876BD9F0 ^ 0x876B = 0x876B5E9B -> bucket 0xB = 11
#   "retention.ms"  h = 0xB02D1E76 -> 0xB02D1E76 ^ 0xB02D = 0xB02DAE5B                    -> bucket 0xB = 11
# Inserted as segment.bytes, b, retention.ms, q, a:
#   bucket 1: q, a   bucket 2: b   bucket 11: segment.bytes, retention.ms
# Without the `h >>> 16` spread segment.bytes would sit in bucket 0 and retention.ms in bucket 6.
HAND_KEYS = ["segment.bytes", "b", "retention.ms", "q", "a"]
HAND_ORDER = ["q", "a", "b", "segment.bytes", "retention.ms"]


def test_hash_map_order_by_hand() -> None:
    assert hash_map_order(HAND_KEYS) == HAND_ORDER


def test_properties_order_by_hand() -> None:
    # Five keys: same 16-bucket table and the same spread (ConcurrentHashMap also masks the sign bit).
    assert properties_order(HAND_KEYS) == HAND_ORDER


def test_properties_order_reference_example() -> None:
    # §0.2 rule 5 (Java 17): buckets cleanup.policy 2, max.message.bytes 5, min.insync.replicas 10,
    # retention.ms 11, segment.bytes 11 (retention.ms was inserted first).
    keys = ["retention.ms", "cleanup.policy", "min.insync.replicas", "segment.bytes", "max.message.bytes"]
    assert properties_order(keys) == [
        "cleanup.policy",
        "max.message.bytes",
        "min.insync.replicas",
        "retention.ms",
        "segment.bytes",
    ]


def test_duplicate_keys_keep_their_first_position() -> None:
    # "a" and "q" share bucket 1; a second put of "a" replaces its value in place, it does not move behind "q".
    assert hash_map_order(["a", "q", "a"]) == ["a", "q"]
    assert properties_order(["a", "q", "a"]) == ["a", "q"]


# --- table growth ------------------------------------------------------------------------------------
#
# "q" (113) and "a" (97) share bucket 1 of a 16 table; in a 32 table "q" moves to 113 & 31 = 17 while "a"
# stays in 1. The fillers c..m (99..109) sit in buckets 3..13 of both tables. So "q" first means 16 buckets,
# "q" last means 32.
#   HashMap:              resize when size > 0.75 * 16 = 12, i.e. on the 13th entry.
#   Properties (CHM(8)):  sizeCtl = 16 - 16/4 = 12, resize when size >= 12, i.e. on the 12th entry.
FILLERS = list("cdefghijklm")


def test_hash_map_keeps_16_buckets_with_12_entries() -> None:
    keys = ["q", "a", *FILLERS[:10]]
    assert len(keys) == 12
    assert hash_map_order(keys) == keys


def test_hash_map_grows_to_32_buckets_at_13_entries() -> None:
    keys = ["q", "a", *FILLERS[:11]]
    assert len(keys) == 13
    assert hash_map_order(keys) == ["a", *FILLERS[:11], "q"]


def test_properties_keeps_16_buckets_with_11_entries() -> None:
    keys = ["q", "a", *FILLERS[:9]]
    assert properties_order(keys) == keys


def test_properties_grows_to_32_buckets_at_12_entries() -> None:
    keys = ["q", "a", *FILLERS[:10]]
    assert len(keys) == 12
    assert properties_order(keys) == ["a", *FILLERS[:10], "q"]


# A..X are 65..88: buckets 1..24 of both a 32 and a 64 table. "q" (113) is bucket 17 of 32 (right after
# "Q" = 81 = bucket 17, inserted earlier) and bucket 49 of 64.
LETTERS = [chr(c) for c in range(ord("A"), ord("X") + 1)]


def test_hash_map_keeps_32_buckets_with_24_entries() -> None:
    # 24 entries: 24 > 0.75 * 32 is false, no second resize.
    keys = [*LETTERS[:-1], "q"]
    assert hash_map_order(keys) == [*LETTERS[:17], "q", *LETTERS[17:-1]]


def test_hash_map_grows_to_64_buckets_at_25_entries() -> None:
    keys = [*LETTERS, "q"]
    assert len(keys) == 25
    assert hash_map_order(keys) == [*LETTERS, "q"]  # OpenJDK 17


def test_properties_grows_to_64_buckets_at_24_entries() -> None:
    keys = [*LETTERS[:-1], "q"]
    assert len(keys) == 24
    assert properties_order(keys) == [*LETTERS[:-1], "q"]


# --- ConcurrentHashMap's resize does not keep bucket order ---------------------------------------------
#
# CHM.transfer splits a bucket by finding its last run of nodes going to the same half ("lastRun"), reuses
# that run, and *prepends* every earlier node to its half. Inserting Q (81), q (113), A (65) - all bucket 1
# of 16 - then nine fillers c..k triggers the resize on the 12th put. Bucket 1 = [Q, q, A] with the
# 16-bit set for Q and q, clear for A: lastRun = [A] stays in bucket 1; Q then q are prepended to
# bucket 17, which ends up [q, Q]. Java 17 prints A,c,...,k,q,Q.


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (["Q", "q", "A", *"cdefghijk"], ["A", *"cdefghijk", "q", "Q"]),
        (
            # 12 topic overrides (kafka-configs --describe order, OpenJDK 17)
            [
                "cleanup.policy", "leader.replication.throttled.replicas", "segment.bytes",
                "message.downconversion.enable", "segment.ms", "index.interval.bytes", "preallocate",
                "compression.type", "max.compaction.lag.ms", "flush.ms", "unclean.leader.election.enable",
                "max.message.bytes",
            ],
            [
                "compression.type", "max.compaction.lag.ms", "leader.replication.throttled.replicas",
                "max.message.bytes", "message.downconversion.enable", "preallocate", "index.interval.bytes",
                "unclean.leader.election.enable", "cleanup.policy", "flush.ms", "segment.ms", "segment.bytes",
            ],
        ),
    ],
)  # fmt: skip
def test_properties_order_after_resize_matches_java(keys: list[str], expected: list[str]) -> None:
    assert properties_order(keys) == expected


def test_hash_map_resize_keeps_bucket_order() -> None:
    # java.util.HashMap splits buckets into lo/hi lists appended at the tail: same keys, order kept.
    keys = ["Q", "q", "A", *"cdefghijkl"]
    assert hash_map_order(keys) == ["A", *"cdefghijkl", "Q", "q"]


# --- Integer.parseInt / Long.parseLong ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("+5", 5),  # a leading '+' since Java 7
        ("-0", 0),
        ("00012", 12),
        ("2147483647", INT_MAX),
        ("-2147483648", INT_MIN),
        ("\u0661\u0662\u0663", 123),  # Character.digit takes any Unicode decimal digit (Arabic-Indic here)
        ("\uff11\uff12", 12),  # fullwidth digits
        ("0" * 30 + "7", 7),  # leading zeros, however many
    ],
)
def test_parse_int_accepts_what_java_accepts(text: str, expected: int) -> None:
    assert java_parse_int(text) == expected


@pytest.mark.parametrize(
    "text", ["", "+", "-", "+-5", " 5", "5 ", "2147483648", "-2147483649", "1_000", "\u00b2", "0x10", "1.0", "1e3"]
)
def test_parse_int_refuses_with_javas_text(text: str) -> None:
    with pytest.raises(NumberFormatError) as caught:
        java_parse_int(text)
    assert str(caught.value) == f'For input string: "{text}"'
    assert isinstance(caught.value, InvalidArgumentError) and isinstance(caught.value, ValueError)


def test_parse_long_bounds() -> None:
    assert java_parse_long("9223372036854775807") == LONG_MAX
    assert java_parse_long("-9223372036854775808") == LONG_MIN
    assert java_parse_long("+1") == 1
    with pytest.raises(NumberFormatError, match='^For input string: "9223372036854775808"$'):
        java_parse_long("9223372036854775808")


# --- String.trim and String.split --------------------------------------------------------------------


def test_trim_strips_controls_but_not_no_break_space() -> None:
    assert java_trim(" \u0001a\u00a0 \u001f") == "a\u00a0"
    assert java_trim("") == ""


@pytest.mark.parametrize(
    ("text", "regex", "expected"),
    [
        ("", ",", [""]),  # no match: the input itself
        (",", ",", []),  # every part empty: all trailing
        ("a,,b,,", ",", ["a", "", "b"]),
        (",a", ",", ["", "a"]),  # a real match at the start keeps its empty string
        ("abc", "", ["a", "b", "c"]),  # ...a zero-width one does not
        ("axbc", "x*", ["a", "", "b", "c"]),
        ("", "x*", [""]),
        ("x", "^", ["x"]),
        ("a1b2", r"\d", ["a", "b"]),
        ("a.b", ".", []),  # a regex: '.' matches everything
        ("a|b", r"\|", ["a", "b"]),
        ("abc", "(b)", ["a", "c"]),  # groups are not returned
        ("a=b", r"\s*=\s*", ["a", "b"]),
        ("a =  b = ", r"\s*=\s*", ["a", "b"]),
        ("a\u00a0=b", r"\s*=\s*", ["a\u00a0", "b"]),  # Java's \s is ASCII
        ("t 0  5", r"\s+", ["t", "0", "5"]),
        (" t 0", r"\s+", ["", "t", "0"]),
        ("t\u00a00 5", r"\s+", ["t\u00a00", "5"]),
        ("1:2", ":", ["1", "2"]),
    ],
)
def test_split_matches_java(text: str, regex: str, expected: list[str]) -> None:
    assert java_split(text, regex) == expected


# --- Scala 2.13 collections ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "text"),
    [
        ([3, 1, 2], "Set(3, 1, 2)"),
        ([3, 1, 2, 9], "Set(3, 1, 2, 9)"),  # Set4: insertion order
        ([0, 1, 2, 3, 4], "HashSet(0, 1, 2, 3, 4)"),
        ([0, 1, 2, 3, 9], "HashSet(0, 1, 9, 2, 3)"),  # improved hashes 0, 7, 11, 14, 20
        ([5, 4, 3, 2, 1, 0, 100, 1001, 77], "HashSet(0, 5, 1001, 1, 77, 2, 3, 4, 100)"),
        ([], "Set()"),
    ],
)
def test_immutable_int_sets(values: list[int], text: str) -> None:
    assert scala_immutable_set(values) == text


STATIC = ["log.dirs", "broker.id", "zookeeper.connect", "num.partitions"]


def test_immutable_string_sets_at_every_size() -> None:
    assert (
        scala_immutable_set(STATIC, java_string_hash) == "Set(log.dirs, broker.id, zookeeper.connect, num.partitions)"
    )
    assert scala_immutable_set([*STATIC, "log.retention.hours"], java_string_hash) == (
        "HashSet(num.partitions, log.dirs, zookeeper.connect, log.retention.hours, broker.id)"
    )


def test_equal_hash_codes_share_a_collision_node_after_the_lone_entries() -> None:
    # "Aa" and "BB" have one String.hashCode: Scala keeps them in one node, listed after the lone
    # entries, in insertion order.
    assert scala_immutable_set(["Aa", "x", "y", "z", "BB", "w"], java_string_hash) == "HashSet(x, y, w, z, Aa, BB)"
    assert scala_immutable_set(["BB", "x", "y", "z", "Aa", "w"], java_string_hash) == "HashSet(x, y, w, z, BB, Aa)"
    assert scala_hash_set_order(["Aa", "BB"], java_string_hash) == ["Aa", "BB"]


def test_set_order_and_text_apart() -> None:
    assert scala_set_order([9, 1, 9, 2]) == [9, 1, 2]
    assert scala_set_order(["b", "a"], java_string_hash) == ["b", "a"]
    assert scala_set_text([4, 3, 2, 1, 0]) == "HashSet(4, 3, 2, 1, 0)"  # the order given is the order printed


def test_mutable_hash_sets() -> None:
    assert scala_mutable_hash_set([3, 1, 2]) == "HashSet(1, 2, 3)"
    assert scala_mutable_hash_set([1001, 1008, 1002]) == "HashSet(1008, 1001, 1002)"
    assert scala_mutable_hash_set(["Aa", "BB", "c"], java_string_hash) == "HashSet(Aa, BB, c)"
    assert scala_mutable_hash_set(["BB", "Aa", "c"], java_string_hash) == "HashSet(BB, Aa, c)"
    assert scala_mutable_hash_order([3, 1, 2]) == [1, 2, 3]


def test_lists_and_booleans() -> None:
    assert scala_list_text([1, 2, 3]) == "List(1, 2, 3)"
    assert scala_list_text([]) == "List()"
    assert java_list_text([1, 2, 3]) == "[1, 2, 3]"
    assert java_list_text([]) == "[]"
    assert (java_boolean_text(True), java_boolean_text(False)) == ("true", "false")


def test_properties_key_set_filtered_as_kafka_prints_it() -> None:
    # DynamicBrokerConfig.nonDynamicConfigs: props.asScala.keySet.intersect(...), iterated in the
    # Properties' order: Set(zookeeper.connect, broker.id, log.dirs) from Scala.
    keys = ["zookeeper.connect", "log.dirs", "broker.id", "x.custom", "num.partitions", "log.retention.hours"]
    assert properties_order(keys) == [
        "log.retention.hours", "num.partitions", "zookeeper.connect", "x.custom", "broker.id", "log.dirs"
    ]  # fmt: skip
    static = [k for k in properties_order(keys) if k in {"log.dirs", "broker.id", "zookeeper.connect"}]
    assert scala_immutable_set(static, java_string_hash) == "Set(zookeeper.connect, broker.id, log.dirs)"


def test_maps() -> None:
    assert scala_immutable_map({3: "v3", 1: "v1", 2: "v2"}) == "Map(3 -> v3, 1 -> v1, 2 -> v2)"
    assert (
        scala_immutable_map({k: f"v{k}" for k in [0, 1, 2, 3, 9]})
        == "HashMap(0 -> v0, 1 -> v1, 9 -> v9, 2 -> v2, 3 -> v3)"
    )
    assert scala_immutable_map({k: f"v{k}" for k in range(1, 7)}) == (
        "HashMap(5 -> v5, 1 -> v1, 6 -> v6, 2 -> v2, 3 -> v3, 4 -> v4)"
    )
    assert scala_map_text([(1, "List(1, 2)")], "LinkedHashMap") == "LinkedHashMap(1 -> List(1, 2))"

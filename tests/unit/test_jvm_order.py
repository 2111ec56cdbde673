"""JVM hash-map iteration orders (kafka-reference.md §0.2 rules 5 and 6).

Every expected order below was also printed by OpenJDK 17 (`java.util.Properties` / `java.util.HashMap`
filled in the given order, then `keySet()` iterated); the comments show how each follows from the algorithm.
"""

from __future__ import annotations

import pytest

from kafkaops.cluster.common.jvm_text import hash_map_order, java_string_hash, properties_order

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

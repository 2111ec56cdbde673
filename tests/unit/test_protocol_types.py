"""Primitive wire types: known encodings from kafka-protocol.md §2.3 and §12.2, limits, and garbage."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkaops.cluster.common.errors import CorruptMessageError, EncodeError
from kafkaops.cluster.protocol.types import (
    BOOLEAN,
    BYTES,
    INT8,
    INT16,
    INT32,
    INT64,
    NULLABLE_BYTES,
    NULLABLE_STRING,
    RECORDS,
    STRING,
    TAG_BUFFER,
    Array,
    Type,
    decode_unsigned_varint,
    decode_varint,
    decode_varlong,
    encode_unsigned_varint,
    encode_varint,
    encode_varlong,
)


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


def encode(type_: Type, value: Any) -> bytes:
    out: list[bytes] = []
    type_.encode(value, out)
    return b"".join(out)


KNOWN = [
    (INT8, -1, "ff"),
    (INT16, -2, "fffe"),
    (INT32, 9092, "00002384"),
    (INT64, -1, "ffffffffffffffff"),
    (BOOLEAN, True, "01"),
    (BOOLEAN, False, "00"),
    (STRING, "", "0000"),
    (STRING, "é", "0002 c3a9"),
    (NULLABLE_STRING, None, "ffff"),
    (BYTES, b"", "00000000"),
    (NULLABLE_BYTES, None, "ffffffff"),
    (RECORDS, b"\x01", "00000001 01"),
    (Array(INT32), [1, 2], "00000002 00000001 00000002"),
    (Array(STRING), ["a"], "00000001 0001 61"),
    (Array(INT32, nullable=True), None, "ffffffff"),
    (TAG_BUFFER, {}, "00"),
    (TAG_BUFFER, {1: b"\xab", 300: b""}, "02 01 01 ab ac02 00"),
]


@pytest.mark.parametrize(("type_", "value", "expected"), KNOWN, ids=[f"{t.name}-{v!r}" for t, v, _ in KNOWN])
def test_known_encodings(type_: Type, value: Any, expected: str) -> None:
    assert encode(type_, value) == h(expected)
    assert type_.decode(h(expected), 0) == (value, len(h(expected)))
    # Decoders read at an offset, from memoryviews too (a frame is never copied into pieces first).
    assert type_.decode(memoryview(b"xyz" + h(expected)), 3) == (value, 3 + len(h(expected)))


def test_any_nonzero_byte_reads_as_true() -> None:
    assert BOOLEAN.decode(b"\x02", 0) == (True, 1)


@pytest.mark.parametrize(
    ("type_", "data", "match"),
    [
        (INT32, "000000", "need 4 bytes"),
        (STRING, "ffff", "length -1"),  # null where null is not allowed
        (NULLABLE_STRING, "fffe", "length -2"),
        (STRING, "0003 6162", "need 3 bytes"),
        (STRING, "0001 80", "UTF-8"),
        (BYTES, "ffffffff", "length -1"),
        (NULLABLE_BYTES, "fffffffe", "length -2"),
        (Array(INT32), "ffffffff", "count -1"),
        (Array(INT32, nullable=True), "fffffffe", "count -2"),
        (Array(INT64), "00000002 0000000000000001", "exceeds"),
        (Array(STRING), "7fffffff 0000", "exceeds"),
        (TAG_BUFFER, "01 05 03 ab", "need 3 bytes"),
    ],
)
def test_malformed_bytes_are_corrupt(type_: Type, data: str, match: str) -> None:
    with pytest.raises(CorruptMessageError, match=match):
        type_.decode(h(data), 0)


def test_null_where_not_allowed_is_an_encode_error() -> None:
    for type_ in (STRING, BYTES, Array(INT32)):
        with pytest.raises(EncodeError, match="cannot be null"):
            encode(type_, None)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, "00"), (-1, "01"), (1, "02"), (300, "d804"), (-(2**31), "ffffffff0f"), (2**31 - 1, "feffffff0f")],
)
def test_varint_zigzag_examples(value: int, expected: str) -> None:
    """§12.2's examples: 0 -> 00, -1 -> 01, 1 -> 02, 300 -> d8 04; and the 32-bit extremes."""
    assert encode_varint(value) == h(expected)
    assert decode_varint(h(expected), 0) == (value, len(h(expected)))


def test_varlong_extremes() -> None:
    assert encode_varlong(-(2**63)) == h("ffffffffffffffffff01")
    assert decode_varlong(h("ffffffffffffffffff01"), 0) == (-(2**63), 10)
    assert decode_varlong(h("feffffffffffffffff01"), 0) == (2**63 - 1, 10)


@pytest.mark.parametrize(("value", "expected"), [(0, "00"), (127, "7f"), (128, "8001"), (2**32 - 1, "ffffffff0f")])
def test_unsigned_varint(value: int, expected: str) -> None:
    assert encode_unsigned_varint(value) == h(expected)
    assert decode_unsigned_varint(h(expected), 0) == (value, len(h(expected)))


@pytest.mark.parametrize(
    ("decoder", "data", "match"),
    [
        (decode_varint, "", "cut short"),
        (decode_varint, "80", "cut short"),
        (decode_varint, "8080808080", "longer than 5"),
        (decode_varint, "ffffffff1f", "exceeds 32 bits"),
        (decode_unsigned_varint, "ffffffff10", "exceeds 32 bits"),
        (decode_varlong, "80808080808080808080", "longer than 10"),
        (decode_varlong, "ffffffffffffffffff7f", "exceeds 64 bits"),
    ],
)
def test_malformed_varints_are_corrupt(decoder: Any, data: str, match: str) -> None:
    with pytest.raises(CorruptMessageError, match=match):
        decoder(h(data), 0)


@pytest.mark.parametrize(
    ("encoder", "value"),
    [(encode_varint, 2**31), (encode_varint, -(2**31) - 1), (encode_varlong, 2**63), (encode_unsigned_varint, -1)],
)
def test_varints_out_of_range_are_encode_errors(encoder: Any, value: int) -> None:
    with pytest.raises(EncodeError, match="out of range"):
        encoder(value)


@given(st.integers(-(2**31), 2**31 - 1))
def test_varint_round_trip(value: int) -> None:
    assert decode_varint(encode_varint(value), 0) == (value, len(encode_varint(value)))


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_round_trip(value: int) -> None:
    assert decode_varlong(encode_varlong(value), 0) == (value, len(encode_varlong(value)))


@settings(deadline=None)  # the first example imports kafka-python
@given(st.integers(-(2**31), 2**31 - 1))
def test_varint_matches_kafka_python(value: int) -> None:
    util = pytest.importorskip("kafka.record.util")
    out = bytearray()
    util.encode_varint(value, out.append)
    assert bytes(out) == encode_varint(value)


@settings(max_examples=300)
@given(
    type_=st.sampled_from([INT64, STRING, NULLABLE_STRING, BYTES, RECORDS, Array(STRING), Array(INT32), TAG_BUFFER]),
    data=st.binary(max_size=24),
)
def test_garbage_decodes_or_is_corrupt(type_: Type, data: bytes) -> None:
    with contextlib.suppress(CorruptMessageError):
        type_.decode(data, 0)


@settings(max_examples=300)
@given(data=st.binary(max_size=12))
def test_garbage_varints_decode_or_are_corrupt(data: bytes) -> None:
    for decoder in (decode_varint, decode_varlong, decode_unsigned_varint):
        with contextlib.suppress(CorruptMessageError):
            decoder(data, 0)

"""Record batch v2: the test vectors of kafka-protocol.md §12.3, pinned CRC-32C values, in-place patching,
the leader's checks on a producer's batch (§12.4), control batches, and agreement with kafka-python's
own builder and reader when it is installed."""

from __future__ import annotations

import contextlib
import struct

import crc32c
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkaops.cluster.common.errors import (
    CorruptMessageError,
    EncodeError,
    InvalidRecordError,
    UnsupportedCompressionTypeError,
)
from kafkaops.cluster.protocol.records import (
    HEADER_SIZE,
    Batch,
    BatchHeader,
    Compression,
    ControlType,
    Record,
    build_batch,
    build_control_batch,
    check_crc,
    compute_crc,
    control_type,
    iter_batches,
    iter_records,
    patch_batch,
    read_header,
    set_log_append_time,
    validate_produce_records,
)


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace("|", " ").replace(" ", ""))


# §12.3: one record, key null, value "hi", timestamp 1700000000000, not idempotent (kafka-python's builder).
VECTOR = h(
    "0000000000000000 0000003a 00000000 02 bbcc4115 0000 00000000 0000018bcfe56800 0000018bcfe56800"
    "ffffffffffffffff ffff ffffffff 00000001 | 10 00 00 00 01 04 6869 00"
)

# Two records with a key, a header, nulls and a second timestamp, from an idempotent producer; written
# out by hand from the layout in records.py. The CRC is pinned below and cross-checked with kafka-python.
TWO_RECORDS = [Record(0, 1000, b"k", b"v", (("h", b"x"),)), Record(1, 1001, None, None)]
TWO_RECORDS_BATCH = h(
    "0000000000000000 00000045 ffffffff 02 348aa88d 0000 00000001 00000000000003e8 00000000000003e9"
    "0000000000000007 0001 00000000 00000002"
    "| 18 00 00 00 02 6b 02 76 02 02 68 02 78"  # length 12; ts +0; offset +0; key "k"; value "v"; 1 header h=x
    "| 0c 00 02 02 01 01 00"  # length 6; ts +1; offset +1; key null; value null; no headers
)


def test_crc32c_check_value() -> None:
    """The standard CRC-32C check value: the package computes Castagnoli, not zlib's CRC-32."""
    assert crc32c.crc32c(b"123456789") == 0xE3069283


def test_section_12_3_vector() -> None:
    assert build_batch([Record(0, 1700000000000, None, b"hi")], partition_leader_epoch=0) == VECTOR
    assert len(VECTOR) == 70
    assert compute_crc(VECTOR) == 0xBBCC4115
    header = read_header(VECTOR)
    assert header == BatchHeader(0, 58, 0, 2, 0xBBCC4115, 0, 0, 1700000000000, 1700000000000, -1, -1, -1, 1)
    [batch] = iter_batches(VECTOR)
    assert list(iter_records(batch)) == [Record(0, 1700000000000, None, b"hi")]


def test_hand_written_batch_with_headers_and_producer_state() -> None:
    built = build_batch(TWO_RECORDS, producer_id=7, producer_epoch=1, base_sequence=0)
    assert built.hex() == TWO_RECORDS_BATCH.hex()
    assert compute_crc(TWO_RECORDS_BATCH) == 0x348AA88D
    [batch] = iter_batches(TWO_RECORDS_BATCH)
    assert batch.header.is_idempotent and batch.header.last_offset == 1 and batch.header.next_offset == 2
    assert list(iter_records(batch)) == TWO_RECORDS


def test_patching_base_offset_and_leader_epoch_keeps_the_crc_valid() -> None:
    buf = bytearray(b"junk" + TWO_RECORDS_BATCH)
    patch_batch(buf, 4, base_offset=1234, partition_leader_epoch=9)
    assert buf[4 + 16 :] == TWO_RECORDS_BATCH[16:]  # nothing from the magic on was touched
    [batch] = iter_batches(buf[4:])  # verifies the CRC
    assert (batch.header.base_offset, batch.header.partition_leader_epoch) == (1234, 9)
    assert [r.offset for r in iter_records(batch)] == [1234, 1235]


def test_log_append_time_rewrites_attributes_max_timestamp_and_crc() -> None:
    buf = bytearray(TWO_RECORDS_BATCH)
    set_log_append_time(buf, 0, 5000)
    [batch] = iter_batches(buf)
    assert batch.header.log_append_time and batch.header.max_timestamp == 5000
    assert [r.timestamp for r in iter_records(batch)] == [5000, 5000]


def test_log_append_time_needs_the_whole_batch() -> None:
    with pytest.raises(CorruptMessageError, match="only 70 present"):
        set_log_append_time(bytearray(TWO_RECORDS_BATCH[:70]), 0, 5000)


def test_concatenated_batches_and_a_truncated_tail() -> None:
    second = build_batch([Record(2, 1, b"a", b"b")])
    data = TWO_RECORDS_BATCH + second
    assert [b.header.base_offset for b in iter_batches(data)] == [0, 2]
    for cut in (5, 20, len(second) - 1):  # inside the length prefix, inside the header, inside the records
        truncated = data[: len(TWO_RECORDS_BATCH) + cut]
        assert [b.header.base_offset for b in iter_batches(truncated, allow_truncated_tail=True)] == [0]
        with pytest.raises(CorruptMessageError):
            list(iter_batches(truncated))


@pytest.mark.parametrize(
    ("position", "fmt", "value", "error"),
    [
        (16, ">b", 1, "magic 1"),  # a v1 message set is not a v2 batch
        (70, ">B", 1, "CRC"),  # a record byte changed
        (8, ">i", 10, "below the 61-byte header"),  # a batch_length too small to hold a header
    ],
)
def test_corrupt_batches(position: int, fmt: str, value: int, error: str) -> None:
    buf = bytearray(TWO_RECORDS_BATCH)
    struct.pack_into(fmt, buf, position, value)
    with pytest.raises(CorruptMessageError, match=error):
        list(iter_batches(buf))


def test_check_crc_names_both_values() -> None:
    header = read_header(VECTOR)
    with pytest.raises(CorruptMessageError, match="CRC 0xbbcc4115 stored, 0x"):
        check_crc(VECTOR[:-1] + b"\x01", header)


def test_gzip_round_trip() -> None:
    records = [Record(10 + i, 1000 + i, f"k{i}".encode(), b"v" * i) for i in range(5)]
    data = build_batch(records, compression=Compression.GZIP)
    [batch] = iter_batches(data)
    assert batch.header.compression == Compression.GZIP
    assert list(iter_records(batch)) == records


def _with_attributes(batch: bytes, attributes: int) -> bytes:
    """The batch with other attributes and a recomputed CRC (what a client using that codec would send)."""
    buf = bytearray(batch)
    struct.pack_into(">h", buf, 21, attributes)
    struct.pack_into(">I", buf, 17, compute_crc(buf))
    return bytes(buf)


@pytest.mark.parametrize("codec", [Compression.SNAPPY, Compression.LZ4, Compression.ZSTD])
def test_other_codecs_frame_and_validate_but_do_not_iterate(codec: Compression) -> None:
    data = _with_attributes(VECTOR, codec)
    [batch] = iter_batches(data)
    assert batch.header.compression == codec
    with pytest.raises(UnsupportedCompressionTypeError):
        list(iter_records(batch))
    with pytest.raises(UnsupportedCompressionTypeError):
        build_batch([Record(0, 0, None, None)], compression=codec)


def test_build_batch_refuses_nothing_and_disorder() -> None:
    with pytest.raises(EncodeError, match="at least one record"):
        build_batch([])
    with pytest.raises(EncodeError, match="ascend"):
        build_batch([Record(1, 0, None, None), Record(1, 0, None, None)])


def test_control_batch() -> None:
    data = build_control_batch(ControlType.COMMIT, offset=7, timestamp=99, producer_id=3, producer_epoch=0)
    [batch] = iter_batches(data)
    assert batch.header.is_control and batch.header.is_transactional
    [record] = iter_records(batch)
    assert record.key == h("0000 0001") and record.value == h("0000 00000000")
    assert control_type(record) == ControlType.COMMIT
    with pytest.raises(CorruptMessageError):
        control_type(Record(0, 0, h("0000 0007"), None))


# --- what a leader accepts from a producer (§12.4) -------------------------------------------------------------


def test_a_valid_producer_batch_passes() -> None:
    batch = validate_produce_records(TWO_RECORDS_BATCH, 8)
    assert isinstance(batch, Batch) and batch.header.records_count == 2


def test_trailing_bytes_that_are_not_a_batch_are_ignored() -> None:
    assert validate_produce_records(VECTOR + b"\x00\x00\x00", 3).header.records_count == 1


@pytest.mark.parametrize(
    ("records", "version", "error", "match"),
    [
        (None, 8, InvalidRecordError, "got none"),
        (b"", 8, InvalidRecordError, "got none"),
        (VECTOR + VECTOR, 8, InvalidRecordError, "got more"),
        (VECTOR[:16] + b"\x01" + VECTOR[17:], 8, InvalidRecordError, "magic 1"),
        (_with_attributes(VECTOR, Compression.ZSTD), 6, UnsupportedCompressionTypeError, "Produce v7"),
        (VECTOR[:-1] + b"\x01", 8, CorruptMessageError, "CRC"),
        (
            build_control_batch(ControlType.ABORT, offset=0, timestamp=0, producer_id=1, producer_epoch=0),
            8,
            InvalidRecordError,
            "control",
        ),
        (
            build_batch([Record(0, 0, None, None), Record(2, 0, None, None)]),
            8,
            InvalidRecordError,
            "last_offset_delta 2",
        ),
        (
            build_batch([Record(0, 0, None, None)], producer_id=5, producer_epoch=0),
            8,
            InvalidRecordError,
            "base sequence",
        ),
    ],
)
def test_batches_a_leader_refuses(records: bytes | None, version: int, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        validate_produce_records(records, version)


def test_zstd_is_fine_from_produce_v7() -> None:
    assert (
        validate_produce_records(_with_attributes(VECTOR, Compression.ZSTD), 7).header.compression == Compression.ZSTD
    )


# --- properties and fuzzing -----------------------------------------------------------------------------------

_nullable_bytes = st.none() | st.binary(max_size=12)


@st.composite
def record_lists(draw: st.DrawFn, contiguous: bool = False) -> list[Record]:
    count = draw(st.integers(1, 5))
    first_offset = 0 if contiguous else draw(st.integers(0, 2**40))
    gaps = [1] * count if contiguous else draw(st.lists(st.integers(1, 1000), min_size=count, max_size=count))
    base_timestamp = draw(st.integers(0, 2**42))
    records = []
    offset = first_offset
    for gap in gaps:
        records.append(
            Record(
                offset,
                base_timestamp + draw(st.integers(-(2**30), 2**30)),
                draw(_nullable_bytes),
                draw(_nullable_bytes),
                tuple(draw(st.lists(st.tuples(st.text(max_size=5), _nullable_bytes), max_size=2))),
            )
        )
        offset += gap
    return records


@settings(max_examples=150, deadline=None)
@given(records=record_lists(), gzip=st.booleans())
def test_records_round_trip(records: list[Record], gzip: bool) -> None:
    data = build_batch(records, compression=Compression.GZIP if gzip else Compression.NONE)
    [batch] = iter_batches(data)
    assert batch.header.records_count == len(records)
    assert batch.header.last_offset == records[-1].offset
    assert batch.header.max_timestamp == max(r.timestamp for r in records)
    assert list(iter_records(batch)) == records


@st.composite
def mutated_batches(draw: st.DrawFn) -> bytes:
    data = bytearray(
        build_batch(draw(record_lists()), compression=draw(st.sampled_from([Compression.NONE, Compression.GZIP])))
    )
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data) - 1))
        data[at] = draw(st.integers(0, 255))
    return bytes(data[: draw(st.integers(0, len(data)))] if draw(st.booleans()) else data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=mutated_batches())
def test_mutated_batches_raise_only_typed_errors(data: bytes) -> None:
    # Without the CRC check the corruption reaches the record parser, which must cope on its own.
    with contextlib.suppress(CorruptMessageError, UnsupportedCompressionTypeError):
        for batch in iter_batches(data, verify_crc=False):
            list(iter_records(batch))


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=120), version=st.integers(3, 8))
def test_random_produce_records_raise_only_typed_errors(data: bytes, version: int) -> None:
    with contextlib.suppress(CorruptMessageError, InvalidRecordError, UnsupportedCompressionTypeError):
        validate_produce_records(data, version)


# --- kafka-python's builder and reader (skipped when it is not installed) -------------------------------------


@settings(max_examples=100, deadline=None)
@given(records=record_lists(contiguous=True))
def test_kafka_python_builds_the_same_bytes(records: list[Record]) -> None:
    default_records = pytest.importorskip("kafka.record.default_records")
    builder = default_records.DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    for r in records:
        builder.append(r.offset, r.timestamp, r.key, r.value, list(r.headers))
    assert bytes(builder.build()) == build_batch(records, partition_leader_epoch=0)


@settings(max_examples=100, deadline=None)
@given(records=record_lists(), gzip=st.booleans())
def test_kafka_python_reads_our_batches(records: list[Record], gzip: bool) -> None:
    default_records = pytest.importorskip("kafka.record.default_records")
    data = build_batch(records, compression=Compression.GZIP if gzip else Compression.NONE)
    theirs = default_records.DefaultRecordBatch(data)
    assert theirs.validate_crc()
    assert [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for r in theirs] == [
        (r.offset, r.timestamp, r.key, r.value, r.headers) for r in records
    ]


def test_kafka_python_pure_python_crc32c_agrees() -> None:
    """kafka-python's own table-driven CRC-32C (no native code) on our pinned batches."""
    crc = pytest.importorskip("kafka.record._crc32c")
    for batch in (VECTOR, TWO_RECORDS_BATCH):
        assert crc.crc(memoryview(batch)[21:]) == read_header(batch).crc
    assert HEADER_SIZE == 61


def test_a_header_is_a_value_replace_makes_a_changed_copy() -> None:
    header = read_header(build_batch([Record(0, 5, None, b"v")]))
    moved = header.replace(base_offset=42)
    assert (moved.base_offset, moved.last_offset) == (42, 42)
    assert (header.base_offset, moved.crc, moved.attributes) == (0, header.crc, header.attributes)
    plain = header.replace(attributes=header.attributes | 1)
    assert plain.compression == 1 and plain != header and plain.replace(attributes=header.attributes) == header
    assert repr(header).startswith("BatchHeader(base_offset=0, batch_length=")

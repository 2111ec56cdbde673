"""Record batch v2 ("magic 2"): the unit producers send, logs store and fetches return (§12).

    offset  field                  type    notes
    0       base_offset            INT64   producers send 0; the leader writes the real one
    8       batch_length           INT32   bytes after this field (total - 12)
    12      partition_leader_epoch INT32   set by the leader on append; outside the CRC
    16      magic                  INT8    2
    17      crc                    UINT32  CRC-32C (Castagnoli) of bytes [21, end)
    21      attributes             INT16   bits 0-2 codec, 3 LogAppendTime, 4 transactional, 5 control
    23      last_offset_delta      INT32
    27      base_timestamp         INT64
    35      max_timestamp          INT64
    43      producer_id            INT64   -1 unless idempotent
    51      producer_epoch         INT16
    53      base_sequence          INT32
    57      records_count          INT32
    61      records...                     plain, or one compressed blob of all of them

    record = length VARINT | attributes INT8 (0) | timestamp_delta VARLONG | offset_delta VARINT
             | key_length VARINT (-1 = null) | key | value_length VARINT (-1 = null) | value
             | header_count VARINT | (key_length VARINT | key UTF-8 | value_length VARINT | value)*

Brokers never re-encode a batch: the leader patches base_offset and partition_leader_epoch in place
(both outside the CRC, so the CRC stays valid); followers and the log store the bytes as they came.
Records are decoded only by consumers and tests. Reading supports no compression and gzip (stdlib);
snappy, lz4 and zstd batches can be framed, validated, stored and served, but not iterated
(UnsupportedCompressionTypeError).

Failures: malformed bytes and CRC mismatches raise CorruptMessageError (Kafka's CORRUPT_MESSAGE),
batches that are well formed but not acceptable from a producer raise InvalidRecordError.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Final, NamedTuple, TypeAlias

import crc32c

from kafkaops.cluster.common.errors import (
    CorruptMessageError,
    EncodeError,
    InvalidRecordError,
    UnsupportedCompressionTypeError,
)

from .types import Buffer, decode_varint, decode_varlong, encode_varint, encode_varlong

HEADER_SIZE: Final = 61
LOG_OVERHEAD: Final = 12
"""base_offset + batch_length: the bytes in front of what batch_length counts."""
MAGIC: Final = 2
CRC_START: Final = 21
"""The CRC covers the batch from the attributes to the end."""

_PARTITION_LEADER_EPOCH_AT: Final = 12
_MAGIC_AT: Final = 16
_CRC_AT: Final = 17
_ATTRIBUTES_AT: Final = 21
_MAX_TIMESTAMP_AT: Final = 35

_HEADER: Final = struct.Struct(">qiibIhiqqqhii")
_LENGTH: Final = struct.Struct(">qi")
_PREFIX: Final = struct.Struct(">qii")
PATCHED_PREFIX: Final = _PREFIX.size
"""Bytes at the start of a batch that the leader's offset assignment rewrites (`patched_prefix`)."""
_I16: Final = struct.Struct(">h")
_I32: Final = struct.Struct(">i")
_I64: Final = struct.Struct(">q")
_U32: Final = struct.Struct(">I")

_COMPRESSION_MASK: Final = 0x07
_LOG_APPEND_TIME: Final = 0x08
_TRANSACTIONAL: Final = 0x10
_CONTROL: Final = 0x20
_DELETE_HORIZON: Final = 0x40
"""KIP-534 (Kafka 3.1): the base timestamp holds the time after which the log cleaner drops the batch's
tombstones; record timestamp deltas stay relative to it, so every reader computes the same timestamps."""


class Compression(IntEnum):
    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class ControlType(IntEnum):
    """The type in a control record's key (transaction markers)."""

    ABORT = 0
    COMMIT = 1


class BatchHeader:
    """The 61-byte header of one batch, as read (a value: `replace` makes a changed copy).

    A plain class rather than a dataclass: mypyc builds a compiled dataclass through the dataclass's generated
    Python __init__ (a frozen one through object.__setattr__ per field, 40 % of a header walk), and this one
    natively. Equality and repr are a dataclass's."""

    FIELDS: Final = (
        "base_offset",
        "batch_length",
        "partition_leader_epoch",
        "magic",
        "crc",
        "attributes",
        "last_offset_delta",
        "base_timestamp",
        "max_timestamp",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "records_count",
    )

    def __init__(
        self,
        base_offset: int,
        batch_length: int,
        partition_leader_epoch: int,
        magic: int,
        crc: int,
        attributes: int,
        last_offset_delta: int,
        base_timestamp: int,
        max_timestamp: int,
        producer_id: int,
        producer_epoch: int,
        base_sequence: int,
        records_count: int,
    ) -> None:
        self.base_offset = base_offset
        self.batch_length = batch_length
        self.partition_leader_epoch = partition_leader_epoch
        self.magic = magic
        self.crc = crc
        self.attributes = attributes
        self.last_offset_delta = last_offset_delta
        self.base_timestamp = base_timestamp
        self.max_timestamp = max_timestamp
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.records_count = records_count

    def _values(self) -> tuple[int, ...]:
        return (
            self.base_offset,
            self.batch_length,
            self.partition_leader_epoch,
            self.magic,
            self.crc,
            self.attributes,
            self.last_offset_delta,
            self.base_timestamp,
            self.max_timestamp,
            self.producer_id,
            self.producer_epoch,
            self.base_sequence,
            self.records_count,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BatchHeader):
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self.FIELDS, self._values(), strict=True))
        return f"BatchHeader({fields})"

    def replace(self, *, base_offset: int | None = None, attributes: int | None = None) -> BatchHeader:
        """A copy with other values of the fields given (what `dataclasses.replace` is for a dataclass)."""
        values = list(self._values())
        if base_offset is not None:
            values[0] = base_offset
        if attributes is not None:
            values[5] = attributes
        return BatchHeader(*values)

    @property
    def size(self) -> int:
        """The whole batch's size in bytes."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def compression(self) -> int:
        """The codec number (Compression), kept as an int: an unknown codec is still a framable batch."""
        return self.attributes & _COMPRESSION_MASK

    @property
    def log_append_time(self) -> bool:
        return bool(self.attributes & _LOG_APPEND_TIME)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & _TRANSACTIONAL)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & _CONTROL)

    @property
    def is_idempotent(self) -> bool:
        return self.producer_id >= 0

    @property
    def delete_horizon_ms(self) -> int | None:
        """When the log cleaner may drop this batch's tombstones (None: not set yet)."""
        return self.base_timestamp if self.attributes & _DELETE_HORIZON else None


View: TypeAlias = memoryview
"""mypyc builds a NamedTuple's annotations from the module's globals, where builtins such as memoryview are not."""


class Batch(NamedTuple):
    """One batch: its header and its bytes (a view into the buffer it was found in)."""

    header: BatchHeader
    data: View


@dataclass(frozen=True, slots=True)
class Record:
    """One record with absolute offset and timestamp; header values may be null, header keys may not."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


# --- reading --------------------------------------------------------------------------------------------


def read_header(buf: Buffer, position: int = 0) -> BatchHeader:
    """The header of the batch at `position`; only the header needs to be in `buf`.

    Raises CorruptMessageError if fewer than 61 bytes are there, the magic is not 2, or batch_length is
    too small to hold a header.
    """
    if len(buf) - position < HEADER_SIZE:
        raise CorruptMessageError(f"record batch header needs {HEADER_SIZE} bytes, have {len(buf) - position}")
    # the fields passed one by one: a compiled BatchHeader is built natively, not through a *args call
    (
        base_offset,
        batch_length,
        partition_leader_epoch,
        magic,
        crc,
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        records_count,
    ) = _HEADER.unpack_from(buf, position)
    header = BatchHeader(
        base_offset,
        batch_length,
        partition_leader_epoch,
        magic,
        crc,
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        records_count,
    )
    if header.magic != MAGIC:
        raise CorruptMessageError(f"record batch magic {header.magic}, only {MAGIC} is supported")
    if header.size < HEADER_SIZE:
        raise CorruptMessageError(f"record batch size {header.size} is below the {HEADER_SIZE}-byte header")
    return header


def compute_crc(batch: Buffer) -> int:
    """CRC-32C of a whole batch's bytes from the attributes to the end."""
    return int(crc32c.crc32c(memoryview(batch)[CRC_START:]))


def check_crc(batch: Buffer, header: BatchHeader) -> None:
    """Raise CorruptMessageError unless the batch's CRC matches its bytes."""
    actual = compute_crc(batch)
    if actual != header.crc:
        raise CorruptMessageError(
            f"record batch at offset {header.base_offset}: CRC {header.crc:#010x} stored, {actual:#010x} computed"
        )


def iter_batches(data: Buffer, *, allow_truncated_tail: bool = False, verify_crc: bool = True) -> Iterator[Batch]:
    """The batches concatenated in `data` (a RECORDS field, or a slice of a log segment).

    With `allow_truncated_tail`, an incomplete last batch is skipped silently, as Kafka's consumers and
    followers skip the partial batch a size-limited fetch may end with; otherwise it is corrupt.
    Raises CorruptMessageError for a malformed header or (with `verify_crc`) a CRC mismatch.
    """
    view = memoryview(data)
    position = 0
    while position < len(view):
        if len(view) - position < LOG_OVERHEAD:
            if allow_truncated_tail:
                return
            raise CorruptMessageError(f"{len(view) - position} trailing bytes do not hold a batch length")
        _, length = _LENGTH.unpack_from(view, position)
        end = position + LOG_OVERHEAD + length
        if length >= HEADER_SIZE - LOG_OVERHEAD and end > len(view):
            if allow_truncated_tail:
                return
            raise CorruptMessageError(f"batch of {end - position} bytes, only {len(view) - position} present")
        header = read_header(view, position)
        batch = view[position:end]
        if verify_crc:
            check_crc(batch, header)
        yield Batch(header, batch)
        position = end


def _decompress(codec: int, payload: memoryview) -> bytes:
    if codec == Compression.NONE:
        return bytes(payload)
    if codec == Compression.GZIP:
        try:
            return gzip.decompress(payload)
        except (OSError, EOFError, zlib.error) as exc:
            raise CorruptMessageError(f"gzip records do not decompress: {exc}") from None
    raise UnsupportedCompressionTypeError(f"cannot read records compressed with codec {codec}")


def _read_bytes(buf: bytes, offset: int) -> tuple[bytes | None, int]:
    length, offset = decode_varint(buf, offset)
    if length < 0:
        if length == -1:
            return None, offset
        raise CorruptMessageError(f"record field with length {length}")
    end = offset + length
    if end > len(buf):
        raise CorruptMessageError(f"record field of {length} bytes runs past the batch")
    return buf[offset:end], end


def iter_records(batch: Batch) -> Iterator[Record]:
    """The records of a batch with absolute offsets and timestamps (the batch's max_timestamp for every
    record under LogAppendTime). Raises CorruptMessageError, or UnsupportedCompressionTypeError for
    codecs other than none and gzip."""
    header = batch.header
    body = _decompress(header.compression, batch.data[HEADER_SIZE:])
    offset = 0
    for _ in range(header.records_count):
        length, offset = decode_varint(body, offset)
        end = offset + length
        if length < 0 or end > len(body):
            raise CorruptMessageError(f"record of length {length} at byte {offset} of a {len(body)}-byte body")
        offset += 1  # attributes, unused
        timestamp_delta, offset = decode_varlong(body, offset)
        offset_delta, offset = decode_varint(body, offset)
        key, offset = _read_bytes(body, offset)
        value, offset = _read_bytes(body, offset)
        header_count, offset = decode_varint(body, offset)
        if header_count < 0 or header_count > end - offset:
            raise CorruptMessageError(f"record with {header_count} headers")
        headers = []
        for _ in range(header_count):
            header_key, offset = _read_bytes(body, offset)
            header_value, offset = _read_bytes(body, offset)
            if header_key is None:
                raise CorruptMessageError("record header with a null key")
            try:
                headers.append((header_key.decode(), header_value))
            except UnicodeDecodeError:
                raise CorruptMessageError("record header key is not UTF-8") from None
        if offset != end:
            raise CorruptMessageError(f"record declared {length} bytes but used {length + offset - end}")
        timestamp = header.max_timestamp if header.log_append_time else header.base_timestamp + timestamp_delta
        yield Record(header.base_offset + offset_delta, timestamp, key, value, tuple(headers))
    if offset != len(body):
        raise CorruptMessageError(f"{len(body) - offset} bytes after the last of {header.records_count} records")


class RecordSpan(NamedTuple):
    """Where one record lies in a batch's (decompressed) body, with what the log cleaner decides on: its
    offset and timestamp deltas, its key, and whether it has a value (a tombstone has none)."""

    start: int
    end: int
    offset_delta: int
    timestamp_delta: int
    key: bytes | None
    has_value: bool


def batch_body(batch: Batch) -> bytes:
    """The records' bytes of a batch, decompressed (none and gzip; UnsupportedCompressionTypeError else)."""
    return _decompress(batch.header.compression, batch.data[HEADER_SIZE:])


def scan_records(body: bytes, count: int) -> list[RecordSpan]:
    """The spans of `count` records in `body` without decoding their values or headers: the log cleaner's
    view, several times faster than `iter_records`. Raises CorruptMessageError."""
    spans = []
    position = 0
    size = len(body)
    base128 = _base128
    try:
        for _ in range(count):
            start = position
            # Varints of one or two bytes (the usual record lengths, deltas and key lengths) inline.
            raw = body[position]
            if raw < 0x80:
                position += 1
            elif body[position + 1] < 0x80:
                raw = (raw & 0x7F) | body[position + 1] << 7
                position += 2
            else:
                raw, position = base128(body, position, 5)
            length = (raw >> 1) ^ -(raw & 1)
            end = position + length
            if length < 0 or end > size:
                raise CorruptMessageError(f"record of length {length} at byte {start} of a {size}-byte body")
            position += 1  # attributes
            raw = body[position]
            if raw < 0x80:
                position += 1
            else:
                raw, position = base128(body, position, 10)
            timestamp_delta = (raw >> 1) ^ -(raw & 1)
            raw = body[position]
            if raw < 0x80:
                position += 1
            elif body[position + 1] < 0x80:
                raw = (raw & 0x7F) | body[position + 1] << 7
                position += 2
            else:
                raw, position = base128(body, position, 5)
            offset_delta = (raw >> 1) ^ -(raw & 1)
            raw = body[position]
            if raw < 0x80:
                position += 1
            elif body[position + 1] < 0x80:
                raw = (raw & 0x7F) | body[position + 1] << 7
                position += 2
            else:
                raw, position = base128(body, position, 5)
            key_length = (raw >> 1) ^ -(raw & 1)
            key = None
            if key_length >= 0:
                key = body[position : position + key_length]
                position += key_length
            # Only the value length's sign matters: zig-zag puts it in the lowest bit (-1, null, is 1).
            raw = body[position]
            if position >= end or key_length < -1 or (raw & 1 and raw != 1):
                raise CorruptMessageError(f"record at byte {start} does not frame")
            spans.append(RecordSpan(start, end, offset_delta, timestamp_delta, key, raw != 1))
            position = end
    except IndexError:
        raise CorruptMessageError(f"record cut short at byte {position} of a {size}-byte body") from None
    if position != size:
        raise CorruptMessageError(f"{size - position} bytes after the last of {count} records")
    return spans


def _base128(buf: bytes, position: int, max_bytes: int) -> tuple[int, int]:
    """An unsigned base-128 number of at most `max_bytes` bytes at `position`, and the position after it."""
    result = shift = 0
    for at in range(position, position + max_bytes):
        byte = buf[at]
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, at + 1
        shift += 7
    raise CorruptMessageError(f"varint longer than {max_bytes} bytes at byte {position}")


def control_type(record: Record) -> ControlType:
    """The marker type of a control batch's record: its key is `version INT16 (0) | type INT16`."""
    if record.key is None or len(record.key) != 4:
        raise CorruptMessageError(f"control record key {record.key!r}")
    version, kind = struct.unpack(">hh", record.key)
    if version != 0 or kind not in (ControlType.ABORT, ControlType.COMMIT):
        raise CorruptMessageError(f"control record version {version} type {kind}")
    return ControlType(kind)


# --- writing --------------------------------------------------------------------------------------------


def patch_batch(buf: bytearray | memoryview, position: int, *, base_offset: int, partition_leader_epoch: int) -> None:
    """Write the leader's base offset and epoch into the batch at `position`, in place.

    Both fields lie before the CRC's range, so the batch stays valid without re-encoding anything.
    """
    _I64.pack_into(buf, position, base_offset)
    _I32.pack_into(buf, position + _PARTITION_LEADER_EPOCH_AT, partition_leader_epoch)


def patched_prefix(header: BatchHeader, *, base_offset: int, partition_leader_epoch: int) -> bytes:
    """The first `PATCHED_PREFIX` bytes of a batch as `patch_batch` leaves them (base offset, length, leader
    epoch): written before the rest of the received batch, they patch it without copying it."""
    return _PREFIX.pack(base_offset, header.size - LOG_OVERHEAD, partition_leader_epoch)


def set_log_append_time(buf: bytearray | memoryview, position: int, timestamp: int) -> None:
    """Stamp the batch at `position` for a LogAppendTime topic: attribute bit 3, max_timestamp = the
    broker's time, then the CRC, which both fields are covered by (the one rewrite that needs it)."""
    header = read_header(buf, position)
    if len(buf) - position < header.size:
        raise CorruptMessageError(f"batch of {header.size} bytes, only {len(buf) - position} present")
    _I16.pack_into(buf, position + _ATTRIBUTES_AT, header.attributes | _LOG_APPEND_TIME)
    _I64.pack_into(buf, position + _MAX_TIMESTAMP_AT, timestamp)
    batch = memoryview(buf)[position : position + header.size]
    _U32.pack_into(buf, position + _CRC_AT, compute_crc(batch))


def _encode_record(record: Record, base_offset: int, base_timestamp: int) -> bytes:
    parts = [b"\x00", encode_varlong(record.timestamp - base_timestamp), encode_varint(record.offset - base_offset)]
    for field in (record.key, record.value):
        parts.append(encode_varint(-1) if field is None else encode_varint(len(field)) + field)
    parts.append(encode_varint(len(record.headers)))
    for key, value in record.headers:
        encoded_key = key.encode()
        parts.append(encode_varint(len(encoded_key)) + encoded_key)
        parts.append(encode_varint(-1) if value is None else encode_varint(len(value)) + value)
    body = b"".join(parts)
    return encode_varint(len(body)) + body


def build_batch(
    records: Sequence[Record],
    *,
    partition_leader_epoch: int = -1,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    compression: Compression = Compression.NONE,
    transactional: bool = False,
    control: bool = False,
) -> bytes:
    """Encode records (offsets ascending; the first one's offset becomes base_offset) as one batch.

    Producers pass offsets 0..n-1 and let the leader assign the real ones; -1 for the leader epoch is
    what Kafka's Java producer sends (librdkafka and kafka-python send 0). Builds uncompressed or gzip
    batches with CreateTime timestamps. Raises EncodeError for no records or offsets out of order.
    """
    if not records:
        raise EncodeError("a record batch needs at least one record")
    base_offset = records[0].offset
    if any(later.offset <= earlier.offset for earlier, later in zip(records, records[1:], strict=False)):
        raise EncodeError("record offsets must ascend")
    base_timestamp = records[0].timestamp
    body = b"".join(_encode_record(r, base_offset, base_timestamp) for r in records)
    if compression == Compression.GZIP:
        # mtime=0 keeps the bytes a function of the records, so tests can pin them.
        body = gzip.compress(body, mtime=0)
    elif compression != Compression.NONE:
        raise UnsupportedCompressionTypeError(f"cannot build batches compressed with {compression.name}")
    attributes = compression | (_TRANSACTIONAL if transactional else 0) | (_CONTROL if control else 0)
    after_crc = struct.pack(
        ">hiqqqhii",
        attributes,
        records[-1].offset - base_offset,
        base_timestamp,
        max(r.timestamp for r in records),
        producer_id,
        producer_epoch,
        base_sequence,
        len(records),
    )
    crc = crc32c.crc32c(after_crc + body)
    batch_length = HEADER_SIZE - LOG_OVERHEAD + len(body)
    return struct.pack(">qiibI", base_offset, batch_length, partition_leader_epoch, MAGIC, crc) + after_crc + body


def build_control_batch(
    kind: ControlType,
    *,
    offset: int,
    timestamp: int,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int = 0,
    partition_leader_epoch: int = -1,
) -> bytes:
    """A transaction marker: a transactional control batch with one record whose key is
    `version INT16 (0) | type INT16` and whose value is `version INT16 (0) | coordinator_epoch INT32`."""
    record = Record(offset, timestamp, struct.pack(">hh", 0, kind), struct.pack(">hi", 0, coordinator_epoch))
    return build_batch(
        [record],
        partition_leader_epoch=partition_leader_epoch,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        transactional=True,
        control=True,
    )


def build_retained_batch(
    original: BatchHeader,
    records: Sequence[Record],
    compression: int | None = None,
    delete_horizon_ms: int | None = None,
) -> bytes:
    """The batch `original` rebuilt around the `records` kept of it (Kafka's `MemoryRecords.filterTo` with
    `buildRetainedRecordsInto`): the original base offset and last offset delta (the producer's last
    sequence stays where it was), producer id, epoch, base sequence, leader epoch, timestamp type and
    transactional/control flags; the records keep their offsets and timestamps. `compression` overrides the
    codec (None: the original's). `delete_horizon_ms` sets KIP-534's delete horizon (the original's stays
    otherwise). Raises EncodeError for no records, UnsupportedCompressionTypeError for a codec other than
    none and gzip."""
    if not records:
        raise EncodeError("a retained batch needs at least one record")
    codec = original.compression if compression is None else compression
    base_offset = original.base_offset
    log_append_time = original.log_append_time
    horizon = original.delete_horizon_ms if delete_horizon_ms is None else delete_horizon_ms
    if horizon is not None:
        base_timestamp = horizon
    else:
        base_timestamp = original.max_timestamp if log_append_time else records[0].timestamp
    body = b"".join(_encode_record(r, base_offset, base_timestamp) for r in records)
    if codec == Compression.GZIP:
        body = gzip.compress(body, mtime=0)
    elif codec != Compression.NONE:
        raise UnsupportedCompressionTypeError(f"cannot build batches compressed with codec {codec}")
    attributes = (original.attributes & ~_COMPRESSION_MASK & ~_DELETE_HORIZON) | codec
    if horizon is not None:
        attributes |= _DELETE_HORIZON
    max_timestamp = original.max_timestamp if log_append_time else max(r.timestamp for r in records)
    after_crc = struct.pack(
        ">hiqqqhii",
        attributes,
        original.last_offset_delta,
        base_timestamp,
        max_timestamp,
        original.producer_id,
        original.producer_epoch,
        original.base_sequence,
        len(records),
    )
    crc = crc32c.crc32c(after_crc + body)
    batch_length = HEADER_SIZE - LOG_OVERHEAD + len(body)
    return (
        struct.pack(">qiibI", base_offset, batch_length, original.partition_leader_epoch, MAGIC, crc) + after_crc + body
    )


def build_batch_from_spans(original: BatchHeader, body: bytes, spans: Sequence[RecordSpan], compression: int) -> bytes:
    """`original` rebuilt around the records of `body` at `spans`, their bytes copied as they are: same base
    offset, last offset delta, base timestamp (so every delta stays true), producer fields, leader epoch and
    flags; the max timestamp is the kept records'. Raises EncodeError for no spans,
    UnsupportedCompressionTypeError for a codec other than none and gzip."""
    if not spans:
        raise EncodeError("a retained batch needs at least one record")
    records = b"".join([body[span.start : span.end] for span in spans])
    if compression == Compression.GZIP:
        records = gzip.compress(records, mtime=0)
    elif compression != Compression.NONE:
        raise UnsupportedCompressionTypeError(f"cannot build batches compressed with codec {compression}")
    attributes = (original.attributes & ~_COMPRESSION_MASK) | compression
    if original.log_append_time:
        max_timestamp = original.max_timestamp
    else:
        max_timestamp = original.base_timestamp + max(span.timestamp_delta for span in spans)
    after_crc = struct.pack(
        ">hiqqqhii",
        attributes,
        original.last_offset_delta,
        original.base_timestamp,
        max_timestamp,
        original.producer_id,
        original.producer_epoch,
        original.base_sequence,
        len(spans),
    )
    crc = crc32c.crc32c(after_crc + records)
    length = HEADER_SIZE - LOG_OVERHEAD + len(records)
    head = struct.pack(">qiibI", original.base_offset, length, original.partition_leader_epoch, MAGIC, crc)
    return head + after_crc + records


def build_empty_batch(original: BatchHeader) -> bytes:
    """A header with no records standing for `original` (Kafka's `DefaultRecordBatch.writeEmptyHeader`):
    kept by the log cleaner so that a producer's last sequence survives the removal of its records."""
    attributes = original.attributes & ~_COMPRESSION_MASK
    after_crc = struct.pack(
        ">hiqqqhii",
        attributes,
        original.last_offset_delta,
        original.max_timestamp,
        original.max_timestamp,
        original.producer_id,
        original.producer_epoch,
        original.base_sequence,
        0,
    )
    crc = crc32c.crc32c(after_crc)
    return (
        struct.pack(
            ">qiibI", original.base_offset, HEADER_SIZE - LOG_OVERHEAD, original.partition_leader_epoch, MAGIC, crc
        )
        + after_crc
    )


# --- a producer's batch, as the leader checks it ----------------------------------------------------------


def validate_produce_records(records: Buffer | None, api_version: int) -> Batch:
    """The one batch of a Produce partition, checked as Kafka's leader checks it before appending (§12.4:
    `ProduceRequest.validateRecords`, then `LogValidator`).

    InvalidRecordError: no batch, magic other than 2, more than one batch, a control batch,
    records_count != last_offset_delta + 1 or 0, an idempotent batch without a base sequence.
    UnsupportedCompressionTypeError: zstd below Produce v7. CorruptMessageError: a malformed header or
    a CRC mismatch. Trailing bytes too short to be a batch are ignored, as Kafka trims them.
    """
    data = memoryview(records if records is not None else b"")
    if len(data) > _MAGIC_AT and data[_MAGIC_AT] != MAGIC:
        raise InvalidRecordError(f"Produce v{api_version} carries magic {data[_MAGIC_AT]} batches; only magic 2")
    batches = iter_batches(data, allow_truncated_tail=True, verify_crc=False)
    batch = next(batches, None)
    if batch is None:
        raise InvalidRecordError(f"Produce v{api_version} needs exactly one record batch per partition, got none")
    if next(batches, None) is not None:
        raise InvalidRecordError(f"Produce v{api_version} needs exactly one record batch per partition, got more")
    header = batch.header
    if header.compression == Compression.ZSTD and api_version < 7:
        raise UnsupportedCompressionTypeError(f"zstd batches need Produce v7+, got v{api_version}")
    check_crc(batch.data, header)
    if header.is_control:
        raise InvalidRecordError("control batches are written by the transaction coordinator, not producers")
    if header.records_count <= 0 or header.records_count != header.last_offset_delta + 1:
        raise InvalidRecordError(
            f"records_count {header.records_count} with last_offset_delta {header.last_offset_delta}"
        )
    if header.is_idempotent and header.base_sequence < 0:
        raise InvalidRecordError(f"idempotent batch of producer {header.producer_id} without a base sequence")
    return batch

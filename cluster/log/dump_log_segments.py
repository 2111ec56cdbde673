"""Kafka's DumpLogSegments (`kafka-dump-log.sh`): the files of a partition directory as Kafka 2.8 prints them.

Offline, over our segments and Kafka's alike (the formats are the same):

    <base>.log        record batches         "baseOffset: … isvalid: …" per batch, "| offset: …" per record
    <base>.index      offset index           "offset: N position: P", checked against the .log
    <base>.timeindex  time index             "timestamp: T offset: N", checked against the .log and .index
    <base>.snapshot   producer state         "producerId: … timestamp: …" per producer (Kafka writes them)
    <base>.txnindex   aborted transactions   "version: … lastStableOffset: …" per aborted transaction

Every printed line is Kafka 2.8's (`core/src/main/scala/kafka/tools/DumpLogSegments.scala`, with the
`toString`s of the Java classes it prints: CompressionType "gzip", TimestampType "CreateTime", a Scala
Option "Some(5)"/"None"). `dump_files` yields the lines for stdout as it goes; what Kafka prints on stderr
at the end (index mismatches, non-consecutive offsets, time index errors) is gathered in `DumpErrors`, and
what it prints on stderr at once (an unknown file, a corrupt snapshot) goes to the `warn` callback.

Where Kafka dies with a stack trace (a failed `--index-sanity-check`, an index entry with no batch within
`--max-message-size`, a corrupt batch header, a missing file), this raises a typed error with Kafka's
message where it has one. Differences, deliberate:

* A name without a dot (`leader-epoch-checkpoint`) is an unknown file; Kafka 2.8 dies on it
  (StringIndexOutOfBoundsException).
* Records of a zstd batch cannot be read here (no zstd decoder): deep iteration prints the batch line and
  warns instead of the records; the time index check uses the batch's max timestamp for such a batch.
  Snappy and lz4 are decompressed in pure Python (slow on big segments).
* Magic 0 and 1 batches (message formats before Kafka 0.11) are refused as corrupt.
* Keys and values print as UTF-8 text (Kafka's default StringDecoder); other decoders are the CLI's to refuse.
"""

from __future__ import annotations

import bisect
import mmap
import os
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import crc32c

from kafkaops.cluster.common.errors import (
    CorruptIndexError,
    CorruptMessageError,
    CorruptSnapshotError,
    InvalidArgumentError,
    UnsupportedCompressionTypeError,
)
from kafkaops.cluster.common.jvm_text import java_parse_long
from kafkaops.cluster.protocol.compression import lz4_decompress, snappy_decompress
from kafkaops.cluster.protocol.group_coordinator_records import format_record_key_and_value
from kafkaops.cluster.protocol.records import (
    HEADER_SIZE,
    LOG_OVERHEAD,
    Batch,
    BatchHeader,
    Compression,
    Record,
    compute_crc,
    iter_records,
    read_header,
)

from .segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX

PRODUCER_SNAPSHOT_SUFFIX = ".snapshot"
TXN_INDEX_SUFFIX = ".txnindex"
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
RECORD_INDENT = "|"

_HEADER_SIZE_UP_TO_MAGIC = 17
_RECORD_OVERHEAD_V0 = 14
"""The smallest batch size field Kafka's FileLogInputStream accepts before it looks at the magic."""
_INT32_MAX = 2**31 - 1
_LENGTH = struct.Struct(">qi")
_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")
_CONTROL_KEY = struct.Struct(">hh")
_END_TXN_MARKER = struct.Struct(">hi")
_COMPRESSION_MASK = 0x07
_DECOMPRESSORS: dict[int, Callable[[bytes | memoryview], bytes]] = {
    Compression.SNAPPY: snappy_decompress,
    Compression.LZ4: lz4_decompress,
}
_CONTROL_TYPES = {0: "ABORT", 1: "COMMIT", 2: "QUORUM_REASSIGNMENT", 3: "LEADER_CHANGE"}

# <base>.snapshot: version INT16 (1) | crc UINT32 (CRC-32C of what follows) | count INT32 | entries
_SNAPSHOT_HEADER = struct.Struct(">hIi")
_SNAPSHOT_ENTRY = struct.Struct(">qhiqiqiq")
"""producer_id, epoch, last_sequence, last_offset, offset_delta, timestamp, coordinator_epoch,
current_txn_first_offset (ProducerStateManager.PidSnapshotEntriesSchema)."""
_SNAPSHOT_VERSION = 1
_SNAPSHOT_ENTRIES_AT = 6
# <base>.txnindex: version INT16 | producer_id INT64 | first_offset | last_offset | last_stable_offset INT64
_ABORTED_TXN = struct.Struct(">hqqqq")


@dataclass(frozen=True, slots=True)
class DumpOptions:
    """kafka-dump-log's switches, resolved as Kafka resolves them (`--print-data-log` implies deep iteration)."""

    print_data_log: bool = False
    deep_iteration: bool = False
    verify_index_only: bool = False
    index_sanity_check: bool = False
    skip_record_metadata: bool = False
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    offsets_decoder: bool = False
    """`--offsets-decoder`: keys and payloads as `__consumer_offsets` records (Kafka's OffsetsMessageParser)."""

    @property
    def is_deep_iteration(self) -> bool:
        return self.deep_iteration or self.print_data_log


@dataclass
class DumpErrors:
    """What Kafka prints on stderr after the last file, keyed by the file's absolute path.

    Offset index mismatches and non-consecutive offsets are Scala lists Kafka prepends to, so they print
    newest first; the time index findings are buffers, printed in order. Files print in the order they
    were found (Kafka's is a hash map's)."""

    index_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_index_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    out_of_order_timestamps: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    shallow_offsets_not_found: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    non_consecutive_offsets: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return any(
            (
                self.index_mismatches,
                self.time_index_mismatches,
                self.out_of_order_timestamps,
                self.shallow_offsets_not_found,
                self.non_consecutive_offsets,
            )
        )

    def lines(self) -> list[str]:
        """Kafka's stderr lines, in its order: index mismatches, time index errors, non-consecutive offsets."""
        lines: list[str] = []
        for name, mismatches in self.index_mismatches.items():
            lines.append(f"Mismatches in :{name}")
            lines.extend(f"  Index offset: {index}, log offset: {log}" for index, log in reversed(mismatches))
        for name, mismatches in self.time_index_mismatches.items():
            lines.append(f"Found timestamp mismatch in :{name}")
            lines.extend(f"  Index timestamp: {index}, log timestamp: {log}" for index, log in mismatches)
        for name, disorder in self.out_of_order_timestamps.items():
            lines.append(f"Found out of order timestamp in :{name}")
            lines.extend(
                f"  Index timestamp: {index}, Previously indexed timestamp: {prev}" for index, prev in disorder
            )
        for missing in self.shallow_offsets_not_found.values():
            lines.append("The following indexed offsets are not found in the log.")
            lines.extend(f"Indexed offset: {index}, found log offset: {log}" for index, log in missing)
        for name, pairs in self.non_consecutive_offsets.items():
            lines.append(f"Non-consecutive offsets in {name}")
            lines.extend(f"  {first} is followed by {second}" for first, second in reversed(pairs))
        return lines


Warn = Callable[[str], None]


def dump_files(paths: list[str], options: DumpOptions, errors: DumpErrors, warn: Warn) -> Iterator[str]:
    """The stdout lines of `kafka-dump-log.sh --files <paths>`, file by file, as they are read.

    Findings for stderr go to `errors` (printed after the last file) and `warn` (printed at once).
    Raises CorruptIndexError, CorruptMessageError, CorruptSnapshotError, NumberFormatError (a file name
    that is not a base offset) or InvalidArgumentError (a file that cannot be read) where Kafka's tool dies.
    """
    for path in paths:
        yield f"Dumping {path}"
        name = os.path.basename(path)
        suffix = name[name.rfind(".") :] if "." in name else ""
        if suffix == LOG_SUFFIX:
            yield from dump_log(path, options, errors, warn)
        elif suffix == INDEX_SUFFIX:
            yield from dump_index(path, options, errors)
        elif suffix == TIME_INDEX_SUFFIX:
            yield from dump_time_index(path, options, errors)
        elif suffix == PRODUCER_SNAPSHOT_SUFFIX:
            try:
                yield from dump_producer_snapshot(path)
            except CorruptSnapshotError as error:
                warn(str(error))
        elif suffix == TXN_INDEX_SUFFIX:
            yield from dump_txn_index(path)
        else:
            warn(f"Ignoring unknown file {path}")


# --- files -------------------------------------------------------------------------------------------------


def _absolute(path: str) -> str:
    """Java's `File.getAbsolutePath`: the working directory prefixed, nothing normalised."""
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def _base_offset(path: str) -> int:
    """Kafka's `file.getName.split("\\.")(0).toLong`."""
    return java_parse_long(os.path.basename(path).split(".")[0])


def _sibling(path: str, suffix: str) -> str:
    return os.path.join(os.path.dirname(_absolute(path)), os.path.basename(path).split(".")[0] + suffix)


def _read(path: str) -> bytes | mmap.mmap:
    """The file's bytes: memory-mapped (a segment may be a gigabyte), or b"" for an empty file."""
    try:
        with open(path, "rb") as file:
            if os.fstat(file.fileno()).st_size == 0:
                return b""
            return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        raise InvalidArgumentError(f"{path} (No such file or directory)") from None
    except OSError as error:
        raise InvalidArgumentError(f"{path} ({error.strerror})") from None


# --- batches as Kafka's FileLogInputStream finds them ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileBatch:
    """A batch of a file: where it starts, its header, its bytes."""

    position: int
    header: BatchHeader
    data: memoryview

    @property
    def is_valid(self) -> bool:
        """Kafka's `DefaultRecordBatch.isValid`: big enough for a header, and the CRC matches."""
        return self.header.size >= HEADER_SIZE and compute_crc(self.data) == self.header.crc


def file_batches(data: bytes | mmap.mmap, path: str, start: int = 0, size: int | None = None) -> Iterator[FileBatch]:
    """The batches from `start` within `size` bytes (the rest of the file by default), as Kafka's
    FileLogInputStream walks them: it stops at a batch that does not fit (the trailing bytes of a torn
    write) and raises CorruptMessageError for a size field below 14 or a magic other than 2."""
    view = memoryview(data)
    end = len(view) if size is None else min(len(view), start + size)
    position = start
    while position < end - _HEADER_SIZE_UP_TO_MAGIC:
        _, length = _LENGTH.unpack_from(view, position)
        if length < _RECORD_OVERHEAD_V0:
            raise CorruptMessageError(
                f"Found record size {length} smaller than minimum record overhead ({_RECORD_OVERHEAD_V0}) "
                f"in file {path}."
            )
        if position > end - LOG_OVERHEAD - length:
            return
        header = read_header(view, position)
        yield FileBatch(position, header, view[position : position + LOG_OVERHEAD + length])
        position += LOG_OVERHEAD + length


def _batch_records(batch: FileBatch) -> list[Record] | None:
    """The batch's records, or None when its codec is one this codec cannot decompress (zstd).

    Snappy and lz4 bodies are decompressed here (`protocol.compression`) and read as the uncompressed
    batch they stand for: the record codec itself reads none and gzip only."""
    header, data = batch.header, batch.data
    decompress = _DECOMPRESSORS.get(header.compression)
    if decompress is not None:
        body = decompress(data[HEADER_SIZE:])
        header = header.replace(attributes=header.attributes & ~_COMPRESSION_MASK)
        data = memoryview(bytes(data[:HEADER_SIZE]) + body)
    try:
        return list(iter_records(Batch(header, data)))
    except UnsupportedCompressionTypeError:
        return None


def _increment_sequence(sequence: int, increment: int) -> int:
    """Kafka's `DefaultRecordBatch.incrementSequence`: sequences wrap to 0 after Integer.MAX_VALUE."""
    if sequence > _INT32_MAX - increment:
        return increment - (_INT32_MAX - sequence) - 1
    return sequence + increment


def _decrement_sequence(sequence: int, decrement: int) -> int:
    if sequence < decrement:
        return _INT32_MAX - (decrement - sequence) + 1
    return sequence - decrement


def _last_sequence(header: BatchHeader) -> int:
    if header.base_sequence == -1:
        return -1
    return _increment_sequence(header.base_sequence, header.last_offset_delta)


def _codec_name(codec: int) -> str:
    """CompressionType.toString ("none", "gzip", …); Kafka fails on an unknown codec id, we print it."""
    try:
        return Compression(codec).name.lower()
    except ValueError:
        return f"unknown({codec})"


def _timestamp_type(header: BatchHeader) -> str:
    return "LogAppendTime" if header.log_append_time else "CreateTime"


def batch_line(batch: FileBatch) -> str:
    """Kafka's `printBatchLevel` for a magic 2 batch."""
    h = batch.header
    return (
        f"baseOffset: {h.base_offset} lastOffset: {h.last_offset} count: {h.records_count} "
        f"baseSequence: {h.base_sequence} lastSequence: {_last_sequence(h)} producerId: {h.producer_id} "
        f"producerEpoch: {h.producer_epoch} partitionLeaderEpoch: {h.partition_leader_epoch} "
        f"isTransactional: {str(h.is_transactional).lower()} isControl: {str(h.is_control).lower()} "
        f"position: {batch.position} {_timestamp_type(h)}: {h.max_timestamp} size: {h.size} magic: {h.magic} "
        f"compresscodec: {_codec_name(h.compression)} crc: {h.crc} isvalid: {str(batch.is_valid).lower()}"
    )


def _string(data: bytes) -> str:
    """kafka.serializer.StringDecoder: `new String(bytes, "UTF8")`, malformed input replaced."""
    return data.decode("utf-8", errors="replace")


def _control_text(record: Record) -> str:
    """What Kafka appends to a control record's line: the end-transaction marker, or the control type."""
    key = record.key or b""
    if len(key) < _CONTROL_KEY.size:
        raise CorruptMessageError(
            "Invalid value size found for end control record key. Must have at least "
            f"{_CONTROL_KEY.size} bytes, but found only {len(key)}"
        )
    version, type_id = _CONTROL_KEY.unpack_from(key)
    if version < 0:
        raise CorruptMessageError(f"Invalid version found for control record: {version}. May indicate data corruption")
    control_type = _CONTROL_TYPES.get(type_id, "UNKNOWN")
    if control_type not in ("ABORT", "COMMIT"):
        return f" controlType: {control_type}({type_id})"
    value = record.value or b""
    if len(value) < _END_TXN_MARKER.size:
        raise CorruptMessageError(
            "Invalid value size found for end transaction marker. Must have at least "
            f"{_END_TXN_MARKER.size} bytes, but found only {len(value)}"
        )
    marker_version, coordinator_epoch = _END_TXN_MARKER.unpack_from(value)
    if marker_version < 0:
        raise CorruptMessageError(
            f"Invalid version found for end transaction marker: {marker_version}. May indicate data corruption"
        )
    return f" endTxnMarker: {control_type} coordinatorEpoch: {coordinator_epoch}"


def record_line(batch: FileBatch, record: Record, options: DumpOptions) -> str:
    """Kafka 2.8's line for one record under deep iteration (and its key and payload with --print-data-log)."""
    h = batch.header
    prefix = f"{RECORD_INDENT} "
    parts: list[str] = []
    if not options.skip_record_metadata:
        key_size = -1 if record.key is None else len(record.key)
        value_size = -1 if record.value is None else len(record.value)
        sequence = -1 if h.base_sequence < 0 else _increment_sequence(h.base_sequence, record.offset - h.base_offset)
        header_keys = ",".join(key for key, _ in record.headers)
        parts.append(
            f"{prefix}offset: {record.offset} isValid: true crc: null keySize: {key_size} valueSize: {value_size} "
            f"{_timestamp_type(h)}: {record.timestamp} baseOffset: {h.base_offset} lastOffset: {h.last_offset} "
            f"baseSequence: {h.base_sequence} lastSequence: {_last_sequence(h)} producerEpoch: {h.producer_epoch} "
            f"partitionLeaderEpoch: {h.partition_leader_epoch} batchSize: {h.size} magic: {h.magic} "
            f"compressType: {_codec_name(h.compression)} position: {batch.position}"
            f" sequence: {sequence} headerKeys: [{header_keys}]"
        )
        prefix = " "
        if h.is_control:
            parts.append(_control_text(record))
    if options.print_data_log and not h.is_control and options.offsets_decoder:
        key_text, payload = format_record_key_and_value(record.key, record.value)
        parts.append(f"{prefix}key: {key_text} payload: {payload}")
    elif options.print_data_log and not h.is_control:
        if record.key is not None:
            parts.append(f"{prefix}key: {_string(record.key)}")
            prefix = " "
        if record.value is not None:
            parts.append(f" payload: {_string(record.value)}")
    return "".join(parts)


def dump_log(path: str, options: DumpOptions, errors: DumpErrors, warn: Warn) -> Iterator[str]:
    """Kafka's `dumpLog`: the batches of a `.log` file, their records under deep iteration."""
    start_offset = _base_offset(path)
    yield f"Starting offset: {start_offset}"
    data = _read(path)
    valid_bytes = 0
    last_offset = -1
    for batch in file_batches(data, path):
        yield batch_line(batch)
        if options.is_deep_iteration:
            records = _batch_records(batch)
            if records is None:
                warn(
                    f"Cannot read the records of the batch at position {batch.position}: "
                    f"{_codec_name(batch.header.compression)} is not supported"
                )
                records = []
            for record in records:
                if last_offset != -1 and record.offset != last_offset + 1:
                    errors.non_consecutive_offsets.setdefault(_absolute(path), []).append((last_offset, record.offset))
                last_offset = record.offset
                yield record_line(batch, record, options)
        valid_bytes += batch.header.size
    trailing_bytes = len(data) - valid_bytes
    if trailing_bytes > 0:
        yield f"Found {trailing_bytes} invalid bytes at the end of {os.path.basename(path)}"


# --- indexes -----------------------------------------------------------------------------------------------


def _index_entries(data: bytes | mmap.mmap, entry: struct.Struct) -> list[tuple[int, int]]:
    """Every whole entry of an index file (Kafka maps the file and counts `length / entrySize` entries)."""
    whole = len(data) - len(data) % entry.size
    return list(entry.iter_unpack(memoryview(data)[:whole]))


def dump_index(path: str, options: DumpOptions, errors: DumpErrors) -> Iterator[str]:
    """Kafka's `dumpIndex`: each entry of an offset index, checked against the batch it points at."""
    base_offset = _base_offset(path)
    log_path = _sibling(path, LOG_SUFFIX)
    log_data = _read(log_path)
    data = _read(path)
    entries = _index_entries(data, _OFFSET_ENTRY)
    if not entries:
        yield f"{path} is empty."
        return
    if options.index_sanity_check:
        _offset_index_sanity_check(path, base_offset, entries, len(data))
        yield f"{path} passed sanity check."
        return
    for i, (relative, position) in enumerate(entries):
        offset = base_offset + relative
        if offset == base_offset and i > 0:
            return  # the zeroed tail of a preallocated index left by a crash
        first = None
        if position >= 0:
            first = next(iter(file_batches(log_data, log_path, position, options.max_message_size)), None)
        if first is None:
            raise CorruptIndexError(
                f"Index {_absolute(path)} maps offset {offset} to position {position}, where {log_path} has no "
                f"batch of at most {options.max_message_size} bytes (--max-message-size)"
            )
        if first.header.last_offset != offset:
            errors.index_mismatches.setdefault(_absolute(path), []).append((offset, first.header.last_offset))
        if not options.verify_index_only:
            yield f"offset: {offset} position: {position}"


def _offset_index_sanity_check(path: str, base_offset: int, entries: list[tuple[int, int]], length: int) -> None:
    """Kafka's `OffsetIndex.sanityCheck`, the check a broker runs at startup. Raises CorruptIndexError."""
    last_offset = base_offset + entries[-1][0] if entries else base_offset
    if entries and last_offset < base_offset:
        raise CorruptIndexError(
            f"Corrupt index found, index file ({_absolute(path)}) has non-zero size but the last offset is "
            f"{last_offset} which is less than the base offset {base_offset}."
        )
    if length % _OFFSET_ENTRY.size:
        raise CorruptIndexError(
            f"Index file {_absolute(path)} is corrupt, found {length} bytes which is neither positive nor a "
            f"multiple of {_OFFSET_ENTRY.size}."
        )


def _time_index_sanity_check(path: str, base_offset: int, entries: list[tuple[int, int]], length: int) -> None:
    """Kafka's `TimeIndex.sanityCheck`. Raises CorruptIndexError."""
    if entries:
        first_timestamp = entries[0][0]
        last_timestamp, last_relative = entries[-1]
        if last_timestamp < first_timestamp:
            raise CorruptIndexError(
                f"Corrupt time index found, time index file ({_absolute(path)}) has non-zero size but the last "
                f"timestamp is {last_timestamp} which is less than the first timestamp {first_timestamp}"
            )
        if base_offset + last_relative < base_offset:
            raise CorruptIndexError(
                f"Corrupt time index found, time index file ({_absolute(path)}) has non-zero size but the last "
                f"offset is {base_offset + last_relative} which is less than the first offset {base_offset}"
            )
    if length % _TIME_ENTRY.size:
        raise CorruptIndexError(
            f"Time index file {_absolute(path)} is corrupt, found {length} bytes which is neither positive nor a "
            f"multiple of {_TIME_ENTRY.size}."
        )


def _max_record_timestamp(batch: FileBatch) -> int:
    records = _batch_records(batch)
    if records is None:
        return batch.header.max_timestamp
    return max((record.timestamp for record in records), default=-1)


def dump_time_index(path: str, options: DumpOptions, errors: DumpErrors) -> Iterator[str]:
    """Kafka's `dumpTimeIndex`: each entry of a time index, checked against the batch holding its offset."""
    base_offset = _base_offset(path)
    log_path = _sibling(path, LOG_SUFFIX)
    log_data = _read(log_path)
    offset_entries = _index_entries(_read(_sibling(path, INDEX_SUFFIX)), _OFFSET_ENTRY)
    data = _read(path)
    entries = _index_entries(data, _TIME_ENTRY)
    if options.index_sanity_check:
        _time_index_sanity_check(path, base_offset, entries, len(data))
        yield f"{path} passed sanity check."
        return
    name = _absolute(path)
    relative_offsets = [relative for relative, _ in offset_entries]
    previous_timestamp = -1
    for i, (timestamp, relative) in enumerate(entries):
        offset = base_offset + relative
        if offset == base_offset and i > 0:
            return
        slot = bisect.bisect_right(relative_offsets, relative) - 1
        position = offset_entries[slot][1] if slot >= 0 else 0
        batch = next((b for b in file_batches(log_data, log_path, position) if b.header.last_offset >= offset), None)
        if batch is None:
            errors.shallow_offsets_not_found.setdefault(name, []).append((offset, -1))
        elif batch.header.last_offset != offset:
            errors.shallow_offsets_not_found.setdefault(name, []).append((offset, batch.header.last_offset))
        else:
            max_timestamp = _max_record_timestamp(batch)
            if max_timestamp != timestamp:
                errors.time_index_mismatches.setdefault(name, []).append((timestamp, max_timestamp))
            if previous_timestamp >= timestamp:
                errors.out_of_order_timestamps.setdefault(name, []).append((timestamp, previous_timestamp))
        if not options.verify_index_only:
            yield f"timestamp: {timestamp} offset: {offset}"
        previous_timestamp = timestamp


# --- producer state and aborted transactions ---------------------------------------------------------------


def dump_producer_snapshot(path: str) -> Iterator[str]:
    """Kafka's `dumpProducerIdSnapshot`: one line per producer of a `.snapshot` file.

    Raises CorruptSnapshotError with Kafka's messages (the caller prints it, as Kafka does, and goes on)."""
    data = bytes(_read(path))
    if len(data) < _SNAPSHOT_HEADER.size:
        raise CorruptSnapshotError(f"Snapshot failed schema validation: {len(data)} bytes hold no snapshot header")
    version, crc, count = _SNAPSHOT_HEADER.unpack_from(data)
    if version != _SNAPSHOT_VERSION:
        raise CorruptSnapshotError(f"Snapshot contained an unknown file version {version}")
    computed = int(crc32c.crc32c(data[_SNAPSHOT_ENTRIES_AT:]))
    if crc != computed:
        raise CorruptSnapshotError(
            f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. Computed crc: {computed}"
        )
    if count < 0 or _SNAPSHOT_HEADER.size + count * _SNAPSHOT_ENTRY.size > len(data):
        raise CorruptSnapshotError(
            f"Snapshot failed schema validation: {count} producer entries do not fit in {len(data)} bytes"
        )
    for i in range(count):
        producer_id, epoch, last_seq, last_offset, offset_delta, timestamp, coordinator_epoch, txn_first = (
            _SNAPSHOT_ENTRY.unpack_from(data, _SNAPSHOT_HEADER.size + i * _SNAPSHOT_ENTRY.size)
        )
        txn_text = f"Some({txn_first})" if txn_first >= 0 else "None"
        line = (
            f"producerId: {producer_id} producerEpoch: {epoch} coordinatorEpoch: {coordinator_epoch} "
            f"currentTxnFirstOffset: {txn_text} "
        )
        if last_offset >= 0:
            line += (
                f"firstSequence: {_decrement_sequence(last_seq, offset_delta)} lastSequence: {last_seq} "
                f"lastOffset: {last_offset} offsetDelta: {offset_delta} timestamp: {timestamp}"
            )
        yield line


def dump_txn_index(path: str) -> Iterator[str]:
    """Kafka's `dumpTxnIndex`: one line per aborted transaction of a `.txnindex` file."""
    data = _read(path)
    for position in range(0, len(data) - _ABORTED_TXN.size + 1, _ABORTED_TXN.size):
        _, producer_id, first_offset, last_offset, last_stable_offset = _ABORTED_TXN.unpack_from(data, position)
        # Kafka reads the INT16 version field as one byte (`buffer.get(VersionOffset)`) and refuses above 0.
        version = struct.unpack_from(">b", data, position)[0]
        if version > 0:
            raise CorruptIndexError(
                f"Unexpected aborted transaction version {version} in transaction index {_absolute(path)}, "
                "current version is 0"
            )
        yield (
            f"version: {version} producerId: {producer_id} firstOffset: {first_offset} "
            f"lastOffset: {last_offset} lastStableOffset: {last_stable_offset}"
        )

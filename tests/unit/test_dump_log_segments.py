"""`kafkaops dump-log` (Kafka 2.8's DumpLogSegments) over hand-built files with known bytes: Kafka's exact
lines for batches, records, control markers, indexes, time indexes, producer snapshots and transaction
indexes; the mismatch reports on stderr; sanity checks; bad input."""

from __future__ import annotations

import struct
from pathlib import Path

import crc32c
import pytest
from typer.testing import CliRunner

from kafkaops.cli.app import app
from kafkaops.cluster.common.errors import CorruptIndexError, CorruptMessageError, NumberFormatError
from kafkaops.cluster.log.dump_log_segments import DumpErrors, DumpOptions, dump_files
from kafkaops.cluster.protocol.records import (
    Compression,
    ControlType,
    Record,
    build_batch,
    build_control_batch,
    patch_batch,
)

# Offsets 0-1, partition leader epoch 4, CreateTime: record 0 has key "k", value "value", header h=1;
# record 1 has neither key nor value. Decoded by hand: length 73, CRC 0xb52636d4, 16- and 6-byte records.
BATCH_0 = bytes.fromhex(
    "0000000000000000000000490000000402b52636d400000000000100000174876e800000000174876e8005ffffffffffffffff"
    "ffffffffffff0000000220000000026b0a76616c756502026802310c000a02010100"
)
SEGMENT = "00000000000000000000"


def gzip_batch() -> bytes:
    """Offset 2, idempotent producer 7 epoch 1, sequences 10-11: key "k2" value "v2", key "k3" value null."""
    batch = bytearray(
        build_batch(
            [Record(0, 1600000001000, b"k2", b"v2"), Record(1, 1600000001002, b"k3", None, (("a", b""), ("b", None)))],
            producer_id=7,
            producer_epoch=1,
            base_sequence=10,
            compression=Compression.GZIP,
        )
    )
    patch_batch(batch, 0, base_offset=2, partition_leader_epoch=4)
    return bytes(batch)


def commit_marker() -> bytes:
    return build_control_batch(
        ControlType.COMMIT, offset=6, timestamp=1600000002000, producer_id=7, producer_epoch=1, coordinator_epoch=3
    )


@pytest.fixture
def segment(tmp_path: Path) -> Path:
    """A segment of three batches (0-1, 2-3 gzip, 6 a commit marker), its index and time index."""
    gzipped = gzip_batch()
    (tmp_path / f"{SEGMENT}.log").write_bytes(BATCH_0 + gzipped + commit_marker())
    (tmp_path / f"{SEGMENT}.index").write_bytes(struct.pack(">iiii", 1, 0, 3, len(BATCH_0)))
    (tmp_path / f"{SEGMENT}.timeindex").write_bytes(struct.pack(">qiqi", 1600000000005, 1, 1600000001002, 3))
    return tmp_path


def dump(paths: list[Path], **options: bool | int) -> tuple[list[str], DumpErrors, list[str]]:
    errors = DumpErrors()
    warnings: list[str] = []
    lines = list(dump_files([str(p) for p in paths], DumpOptions(**options), errors, warnings.append))  # type: ignore[arg-type]
    return lines, errors, warnings


def batch_crc(batch: bytes) -> int:
    return int(crc32c.crc32c(batch[21:]))


def test_shallow_batches_are_kafka_lines(segment: Path) -> None:
    lines, errors, warnings = dump([segment / f"{SEGMENT}.log"])
    gzipped, marker = gzip_batch(), commit_marker()
    assert lines == [
        f"Dumping {segment}/{SEGMENT}.log",
        "Starting offset: 0",
        "baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
        "partitionLeaderEpoch: 4 isTransactional: false isControl: false position: 0 CreateTime: 1600000000005 "
        "size: 85 magic: 2 compresscodec: none crc: 3039180500 isvalid: true",
        "baseOffset: 2 lastOffset: 3 count: 2 baseSequence: 10 lastSequence: 11 producerId: 7 producerEpoch: 1 "
        "partitionLeaderEpoch: 4 isTransactional: false isControl: false position: 85 CreateTime: 1600000001002 "
        f"size: {len(gzipped)} magic: 2 compresscodec: gzip crc: {batch_crc(gzipped)} isvalid: true",
        "baseOffset: 6 lastOffset: 6 count: 1 baseSequence: -1 lastSequence: -1 producerId: 7 producerEpoch: 1 "
        f"partitionLeaderEpoch: -1 isTransactional: true isControl: true position: {85 + len(gzipped)} "
        f"CreateTime: 1600000002000 size: {len(marker)} magic: 2 compresscodec: none crc: {batch_crc(marker)} "
        "isvalid: true",
    ]
    assert not errors and not warnings


def test_print_data_log_prints_records_keys_payloads_and_markers(segment: Path) -> None:
    lines, errors, _ = dump([segment / f"{SEGMENT}.log"], print_data_log=True)
    size = len(gzip_batch())
    common = "isValid: true crc: null"
    assert lines[3:5] == [
        f"| offset: 0 {common} keySize: 1 valueSize: 5 CreateTime: 1600000000000 baseOffset: 0 lastOffset: 1 "
        "baseSequence: -1 lastSequence: -1 producerEpoch: -1 partitionLeaderEpoch: 4 batchSize: 85 magic: 2 "
        "compressType: none position: 0 sequence: -1 headerKeys: [h] key: k payload: value",
        f"| offset: 1 {common} keySize: -1 valueSize: -1 CreateTime: 1600000000005 baseOffset: 0 lastOffset: 1 "
        "baseSequence: -1 lastSequence: -1 producerEpoch: -1 partitionLeaderEpoch: 4 batchSize: 85 magic: 2 "
        "compressType: none position: 0 sequence: -1 headerKeys: []",
    ]
    assert lines[6:8] == [
        f"| offset: 2 {common} keySize: 2 valueSize: 2 CreateTime: 1600000001000 baseOffset: 2 lastOffset: 3 "
        f"baseSequence: 10 lastSequence: 11 producerEpoch: 1 partitionLeaderEpoch: 4 batchSize: {size} magic: 2 "
        "compressType: gzip position: 85 sequence: 10 headerKeys: [] key: k2 payload: v2",
        f"| offset: 3 {common} keySize: 2 valueSize: -1 CreateTime: 1600000001002 baseOffset: 2 lastOffset: 3 "
        f"baseSequence: 10 lastSequence: 11 producerEpoch: 1 partitionLeaderEpoch: 4 batchSize: {size} magic: 2 "
        "compressType: gzip position: 85 sequence: 11 headerKeys: [a,b] key: k3",
    ]
    assert lines[9].endswith("sequence: -1 headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 3")
    assert "key:" not in lines[9]  # a control record's key and value are not data
    assert errors.lines() == [f"Non-consecutive offsets in {segment}/{SEGMENT}.log", "  3 is followed by 6"]


def test_deep_iteration_without_data_and_skip_record_metadata(segment: Path) -> None:
    deep, _, _ = dump([segment / f"{SEGMENT}.log"], deep_iteration=True)
    assert deep[3].endswith("headerKeys: [h]") and deep[4].endswith("headerKeys: []")
    bare, _, _ = dump([segment / f"{SEGMENT}.log"], print_data_log=True, skip_record_metadata=True)
    # Kafka's "| " prefix comes with a key; a record with only a payload, or nothing, prints without it
    assert bare[3:5] == ["| key: k payload: value", ""]
    assert bare[6:8] == ["| key: k2 payload: v2", "| key: k3"]
    assert bare[9] == ""


def test_trailing_bytes_and_sequence_wrap(tmp_path: Path) -> None:
    batch = bytearray(
        build_batch([Record(0, 5, None, b"a"), Record(1, 5, None, b"b")], producer_id=1, base_sequence=2**31 - 1)
    )
    path = tmp_path / "00000000000000000042.log"
    path.write_bytes(bytes(batch) + BATCH_0[:30])
    lines, _, _ = dump([path], deep_iteration=True)
    assert lines[1] == "Starting offset: 42"
    assert "baseSequence: 2147483647 lastSequence: 0 " in lines[2]
    assert "sequence: 2147483647 " in lines[3] and "sequence: 0 " in lines[4]
    assert lines[-1] == "Found 30 invalid bytes at the end of 00000000000000000042.log"


def test_a_bad_crc_is_reported_invalid_and_a_bad_size_is_corrupt(tmp_path: Path) -> None:
    broken = bytearray(BATCH_0)
    broken[-1] ^= 0xFF
    path = tmp_path / f"{SEGMENT}.log"
    path.write_bytes(bytes(broken))
    lines, _, _ = dump([path])
    assert lines[2].endswith("crc: 3039180500 isvalid: false")
    path.write_bytes(struct.pack(">qi", 0, 10) + bytes(20))
    with pytest.raises(CorruptMessageError, match=r"Found record size 10 smaller than minimum record overhead \(14\)"):
        dump([path])


def test_offset_index_entries_and_mismatches(segment: Path) -> None:
    index = segment / f"{SEGMENT}.index"
    lines, errors, _ = dump([index])
    assert lines == [f"Dumping {index}", "offset: 1 position: 0", "offset: 3 position: 85"]
    assert not errors
    # entries pointing at the wrong batches: Kafka lists them newest first, on stderr after every file
    index.write_bytes(struct.pack(">iiiiii", 0, 0, 2, 85, 5, 85))
    lines, errors, _ = dump([index], verify_index_only=True)
    assert lines == [f"Dumping {index}"]
    assert errors.lines() == [
        f"Mismatches in :{index}",
        "  Index offset: 5, log offset: 3",
        "  Index offset: 2, log offset: 3",
        "  Index offset: 0, log offset: 1",
    ]


def test_offset_index_stops_at_a_zeroed_tail_and_reports_empty(segment: Path) -> None:
    index = segment / f"{SEGMENT}.index"
    index.write_bytes(struct.pack(">ii", 1, 0) + bytes(16))
    assert dump([index])[0] == [f"Dumping {index}", "offset: 1 position: 0"]
    index.write_bytes(b"")
    assert dump([index])[0] == [f"Dumping {index}", f"{index} is empty."]


def test_index_sanity_check(segment: Path) -> None:
    index, time_index = segment / f"{SEGMENT}.index", segment / f"{SEGMENT}.timeindex"
    assert dump([index, time_index], index_sanity_check=True)[0] == [
        f"Dumping {index}",
        f"{index} passed sanity check.",
        f"Dumping {time_index}",
        f"{time_index} passed sanity check.",
    ]
    index.write_bytes(struct.pack(">ii", 1, 0) + b"\x00\x00\x00")
    with pytest.raises(CorruptIndexError) as failed:
        dump([index], index_sanity_check=True)
    assert str(failed.value) == (
        f"Index file {index} is corrupt, found 11 bytes which is neither positive nor a multiple of 8."
    )
    index.write_bytes(struct.pack(">ii", -1, 0))
    with pytest.raises(CorruptIndexError, match=r"the last offset is -1 which is less than the base offset 0\.$"):
        dump([index], index_sanity_check=True)
    time_index.write_bytes(struct.pack(">qiqi", 20, 1, 10, 3))
    with pytest.raises(CorruptIndexError) as failed:
        dump([time_index], index_sanity_check=True)
    assert str(failed.value) == (
        f"Corrupt time index found, time index file ({time_index}) has non-zero size but the last timestamp is 10 "
        "which is less than the first timestamp 20"
    )


def test_time_index_entries_and_errors(segment: Path) -> None:
    time_index = segment / f"{SEGMENT}.timeindex"
    lines, errors, _ = dump([time_index])
    assert lines == [
        f"Dumping {time_index}",
        "timestamp: 1600000000005 offset: 1",
        "timestamp: 1600000001002 offset: 3",
    ]
    assert not errors
    time_index.write_bytes(struct.pack(">qiqiqiqi", 1600000000009, 1, 1600000000009, 3, 7, 2, 9, 40))
    lines, errors, _ = dump([time_index], verify_index_only=True)
    assert lines == [f"Dumping {time_index}"]
    assert errors.lines() == [
        f"Found timestamp mismatch in :{time_index}",
        "  Index timestamp: 1600000000009, log timestamp: 1600000000005",
        "  Index timestamp: 1600000000009, log timestamp: 1600000001002",
        f"Found out of order timestamp in :{time_index}",
        "  Index timestamp: 1600000000009, Previously indexed timestamp: 1600000000009",
        "The following indexed offsets are not found in the log.",
        "Indexed offset: 2, found log offset: 3",
        "Indexed offset: 40, found log offset: -1",
    ]


def snapshot(entries: list[tuple[int, int, int, int, int, int, int, int]], version: int = 1) -> bytes:
    body = struct.pack(">i", len(entries)) + b"".join(struct.pack(">qhiqiqiq", *entry) for entry in entries)
    return struct.pack(">hI", version, crc32c.crc32c(body)) + body


def test_producer_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000010.snapshot"
    # producer_id, epoch, last_sequence, last_offset, offset_delta, timestamp, coordinator_epoch, txn first offset
    path.write_bytes(
        snapshot(
            [
                (7, 1, 11, 3, 1, 1600000001002, 3, -1),
                (9, 0, 4, 8, 5, 1600000003000, -1, 6),
                (11, 2, -1, -1, 0, -1, 0, -1),
            ]
        )
    )
    lines, _, warnings = dump([path])
    assert lines == [
        f"Dumping {path}",
        "producerId: 7 producerEpoch: 1 coordinatorEpoch: 3 currentTxnFirstOffset: None firstSequence: 10 "
        "lastSequence: 11 lastOffset: 3 offsetDelta: 1 timestamp: 1600000001002",
        "producerId: 9 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: Some(6) firstSequence: 2147483647 "
        "lastSequence: 4 lastOffset: 8 offsetDelta: 5 timestamp: 1600000003000",
        "producerId: 11 producerEpoch: 2 coordinatorEpoch: 0 currentTxnFirstOffset: None ",
    ]
    assert not warnings
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    crc = struct.unpack_from(">I", data, 2)[0]
    assert dump([path])[2] == [
        f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. Computed crc: {crc32c.crc32c(bytes(data[6:]))}"
    ]
    path.write_bytes(snapshot([], version=2))
    assert dump([path])[2] == ["Snapshot contained an unknown file version 2"]


def test_txn_index_and_unknown_files(tmp_path: Path) -> None:
    path = tmp_path / f"{SEGMENT}.txnindex"
    path.write_bytes(struct.pack(">hqqqq", 0, 7, 2, 5, 6) + struct.pack(">hqqqq", 0, 9, 10, 12, 12) + b"\x00" * 5)
    checkpoint = tmp_path / "leader-epoch-checkpoint"
    checkpoint.write_text("0\n1\n0 0\n")
    lines, _, warnings = dump([path, checkpoint, tmp_path / "x.deleted"])
    assert lines == [
        f"Dumping {path}",
        "version: 0 producerId: 7 firstOffset: 2 lastOffset: 5 lastStableOffset: 6",
        "version: 0 producerId: 9 firstOffset: 10 lastOffset: 12 lastStableOffset: 12",
        f"Dumping {checkpoint}",
        f"Dumping {tmp_path}/x.deleted",
    ]
    assert warnings == [f"Ignoring unknown file {checkpoint}", f"Ignoring unknown file {tmp_path}/x.deleted"]


def test_a_log_name_that_is_not_an_offset(tmp_path: Path) -> None:
    path = tmp_path / "segment.log"
    path.write_bytes(BATCH_0)
    with pytest.raises(NumberFormatError, match='For input string: "segment"'):
        dump([path])


# --- the command --------------------------------------------------------------------------------------------


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["dump-log", *args], catch_exceptions=False)


def test_command_prints_lines_then_findings(segment: Path) -> None:
    index = segment / f"{SEGMENT}.index"
    index.write_bytes(struct.pack(">ii", 0, 0))
    result = run("--files", f"{segment}/{SEGMENT}.log,{index}", "--print-data-log")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[:3] == [
        f"Dumping {segment}/{SEGMENT}.log",
        "Starting offset: 0",
        result.stdout.splitlines()[2],
    ]
    assert result.stdout.splitlines()[-2:] == [f"Dumping {index}", "offset: 0 position: 0"]
    assert result.stderr.splitlines() == [
        f"Mismatches in :{index}",
        "  Index offset: 0, log offset: 1",
        f"Non-consecutive offsets in {segment}/{SEGMENT}.log",
        "  3 is followed by 6",
    ]


def test_command_decoders_and_usage(segment: Path) -> None:
    log = f"{segment}/{SEGMENT}.log"
    # a decoder option alone turns on --print-data-log, as in Kafka
    assert (
        "key: k payload: value" in run("--files", log, "--value-decoder-class", "kafka.serializer.StringDecoder").stdout
    )
    refused = run("--files", log, "--key-decoder-class", "com.example.AvroDecoder")
    assert refused.exit_code == 1
    assert "decodes keys and values as UTF-8 text only (kafka.serializer.StringDecoder)" in refused.stderr
    assert run("--files", log, "--transaction-log-decoder").exit_code == 1
    # a segment of another topic is no __consumer_offsets data: the record's key has no version
    not_offsets = run("--files", log, "--offsets-decoder")
    assert not_offsets.exit_code == 1 and "has no version" in not_offsets.stderr
    missing = run("--print-data-log")
    assert missing.exit_code == 1
    assert missing.stderr.startswith('Missing required argument "[files]"\n')
    nothing = run()
    assert nothing.exit_code == 1 and nothing.stderr.startswith("This tool helps to parse a log file")


def test_command_failures_are_one_line(segment: Path) -> None:
    absent = run("--files", f"{segment}/00000000000000000099.log")
    assert absent.exit_code == 1
    assert absent.stdout == f"Dumping {segment}/00000000000000000099.log\nStarting offset: 99\n"
    assert absent.stderr == f"{segment}/00000000000000000099.log (No such file or directory)\n"
    index = segment / f"{SEGMENT}.index"
    too_small = run("--files", str(index), "--max-message-size", "50")
    assert too_small.exit_code == 1
    assert "no batch of at most 50 bytes (--max-message-size)" in too_small.stderr

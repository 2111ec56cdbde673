"""Recovery on open: torn tails, corrupt batches, lost or damaged indexes, the recovery point and the clean
shutdown that bound what is scanned, the epoch cache rebuilt; and the two properties: appends read back
exactly, and a log cut at any byte keeps exactly the whole valid batches before the cut."""

from __future__ import annotations

import struct
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkaops.cluster.log import EpochEntry, Log, LogConfig
from kafkaops.cluster.log.checkpoints import LEADER_EPOCH_CHECKPOINT
from kafkaops.cluster.protocol.records import Record, build_batch, iter_batches

T0 = 1_700_000_000_000
FIRST_LOG = "00000000000000000000.log"
FIRST_INDEX = "00000000000000000000.index"


def batch(records: int = 1, size: int = 10, base_offset: int = 0, epoch: int = -1) -> bytes:
    return build_batch(
        [Record(base_offset + i, T0 + i, None, bytes([i % 251]) * size) for i in range(records)],
        partition_leader_epoch=epoch,
    )


def spans(records: bytes) -> list[tuple[int, int]]:
    return [(b.header.base_offset, b.header.last_offset) for b in iter_batches(records)]


def write_log(directory: Path, count: int = 10, **config: int) -> tuple[Log, list[int]]:
    """A log of `count` two-record batches, left open as a SIGKILL leaves it; also the batch positions."""
    log = Log(directory, LogConfig(**config))
    positions = []
    for i in range(count):
        positions.append(log.size_in_bytes)
        log.append_as_leader(batch(records=2, size=20), leader_epoch=i // 4)
    return log, positions


def reopen(directory: Path, **kwargs: int | bool) -> Log:
    return Log(directory, LogConfig(index_interval_bytes=100), **kwargs)  # type: ignore[arg-type]


def test_a_torn_tail_is_cut_at_the_last_whole_batch(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    _, positions = write_log(directory, index_interval_bytes=100)
    segment = directory / FIRST_LOG
    with open(segment, "r+b") as file:
        file.truncate(positions[9] + 30)  # inside the last batch's header
    log = reopen(directory)
    assert log.log_end_offset == 18
    assert segment.stat().st_size == positions[9]
    assert spans(log.read(0, 1 << 20).records) == [(2 * i, 2 * i + 1) for i in range(9)]
    assert log.append_as_leader(batch(), 3).first_offset == 18


def test_a_corrupt_batch_in_the_middle_cuts_the_log_there(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    _, positions = write_log(directory)
    segment = directory / FIRST_LOG
    data = bytearray(segment.read_bytes())
    data[positions[4] + 70] ^= 0x01  # a record byte of batch 4: its CRC no longer matches
    segment.write_bytes(data)
    log = reopen(directory)
    assert log.log_end_offset == 8
    assert spans(log.read(0, 1 << 20).records)[-1] == (6, 7)
    assert log.epoch_entries == [EpochEntry(0, 0), EpochEntry(1, 8)][:1]  # epoch 1 started at 8: gone


def test_corruption_deletes_the_segments_after_it(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    size = len(batch(records=2, size=20))
    _, _ = write_log(directory, segment_bytes=3 * size + 10)
    assert len(list(directory.glob("*.log"))) == 4
    segment = directory / FIRST_LOG
    data = bytearray(segment.read_bytes())
    data[size + 9] ^= 0xFF  # batch 1's length field: the framing is broken
    segment.write_bytes(data)
    log = reopen(directory)
    assert (log.log_end_offset, log.segment_base_offsets) == (2, [0])
    assert sorted(p.name for p in directory.glob("*.log")) == [FIRST_LOG]


def test_a_damaged_base_offset_is_caught_by_the_next_segments_base(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    size = len(batch(records=2, size=20))
    write_log(directory, segment_bytes=3 * size + 10)
    segment = directory / FIRST_LOG
    data = bytearray(segment.read_bytes())
    data[size + 5] ^= 0xFF  # batch 1's base offset, which the CRC does not cover: now 16711682
    segment.write_bytes(data)
    log = reopen(directory)
    assert (log.log_end_offset, log.segment_base_offsets) == (2, [0])


def test_zeros_after_the_data_are_cut(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    write_log(directory, count=3)
    with open(directory / FIRST_LOG, "ab") as file:
        file.write(bytes(4096))  # e.g. blocks allocated but never written before a power cut
    log = reopen(directory)
    assert log.log_end_offset == 6
    assert (directory / FIRST_LOG).stat().st_size == log.size_in_bytes


def test_offsets_that_go_backwards_are_cut(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    write_log(directory, count=3)
    with open(directory / FIRST_LOG, "ab") as file:
        file.write(batch(base_offset=2))  # valid CRC, but offset 2 is already in the log
    assert reopen(directory).log_end_offset == 6


def test_only_segments_from_the_recovery_point_are_scanned(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    size = len(batch(records=2, size=20))
    write_log(directory, segment_bytes=3 * size + 10)  # segments at 0, 6, 12, 18
    first = directory / FIRST_LOG
    data = bytearray(first.read_bytes())
    data[size + 70] ^= 0x01  # a CRC mismatch below the recovery point is not looked for
    first.write_bytes(data)
    last = directory / "00000000000000000018.log"
    with open(last, "r+b") as file:
        file.truncate(last.stat().st_size - 1)
    log = reopen(directory, recovery_point=12)
    assert (log.log_end_offset, log.segment_base_offsets) == (18, [0, 6, 12, 18])
    assert log.recovery_point == 18


def test_a_clean_shutdown_skips_recovery(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log, positions = write_log(directory)
    log.close()
    segment = directory / FIRST_LOG
    data = bytearray(segment.read_bytes())
    data[positions[4] + 70] ^= 0x01  # a bad CRC, framing intact: only a recovery would notice
    segment.write_bytes(data)
    assert reopen(directory, had_clean_shutdown=True).log_end_offset == 20
    assert reopen(directory).log_end_offset == 8


def test_a_tail_that_does_not_frame_is_recovered_despite_a_clean_shutdown(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log, _ = write_log(directory)
    log.close()
    with open(directory / FIRST_LOG, "ab") as file:
        file.write(b"garbage where the next batch should start")
    log = reopen(directory, had_clean_shutdown=True)
    assert (log.log_end_offset, log.size_in_bytes) == (20, (directory / FIRST_LOG).stat().st_size)


def test_a_missing_index_is_rebuilt_identically(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log, _ = write_log(directory, index_interval_bytes=100)
    log.close()
    index = (directory / FIRST_INDEX).read_bytes()
    assert len(index) > 16
    (directory / FIRST_INDEX).unlink()
    log = reopen(directory, had_clean_shutdown=True)
    assert (directory / FIRST_INDEX).read_bytes() == index
    assert spans(log.read(13, 1).records) == [(12, 13)]


def test_a_damaged_index_is_rebuilt(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log, _ = write_log(directory, index_interval_bytes=100)
    log.close()
    index = (directory / FIRST_INDEX).read_bytes()
    for damage in (
        index[:-3],
        index[:8] + struct.pack(">ii", 1, 5) + index[16:],
        index + struct.pack(">ii", 99, 10**6),
    ):
        (directory / FIRST_INDEX).write_bytes(damage)
        log = reopen(directory, had_clean_shutdown=True)
        assert (directory / FIRST_INDEX).read_bytes() == index
        for offset in range(20):
            assert spans(log.read(offset, 1).records) == [(offset - offset % 2, offset - offset % 2 + 1)]
        log.close()


def test_an_index_pointing_at_the_wrong_batch_is_rebuilt(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log, positions = write_log(directory, index_interval_bytes=100)
    log.close()
    index = bytearray((directory / FIRST_INDEX).read_bytes())
    relative, position = struct.unpack_from(">ii", index, len(index) - 8)
    struct.pack_into(">ii", index, len(index) - 8, relative + 2, position)  # ascending, in range, but wrong
    (directory / FIRST_INDEX).write_bytes(index)
    reopen(directory, had_clean_shutdown=True)
    assert struct.unpack_from(">ii", (directory / FIRST_INDEX).read_bytes(), len(index) - 8) == (relative, position)


def test_an_orphaned_index_is_deleted(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    write_log(directory, count=1)
    (directory / "00000000000000000099.index").write_bytes(b"")
    (directory / "leader-epoch-checkpoint.tmp").write_text("0\n")
    (directory / "notes.txt").write_text("left alone")
    reopen(directory)
    assert not (directory / "00000000000000000099.index").exists()
    assert not (directory / "leader-epoch-checkpoint.tmp").exists()
    assert (directory / "notes.txt").exists()


def test_a_corrupt_epoch_checkpoint_is_rebuilt_from_the_batches(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    log, _ = write_log(directory)
    assert log.epoch_entries == [EpochEntry(0, 0), EpochEntry(1, 8), EpochEntry(2, 16)]
    (directory / LEADER_EPOCH_CHECKPOINT).write_text("0\n3\n0 0\n1 x\n")
    log = reopen(directory, had_clean_shutdown=True)
    assert log.epoch_entries == [EpochEntry(0, 0), EpochEntry(1, 8), EpochEntry(2, 16)]
    assert (directory / LEADER_EPOCH_CHECKPOINT).read_text() == "0\n3\n0 0\n1 8\n2 16\n"


def test_recovery_restores_epochs_lost_with_the_checkpoint(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    write_log(directory)
    (directory / LEADER_EPOCH_CHECKPOINT).write_text("0\n1\n0 0\n")  # written before epochs 1 and 2 began
    assert reopen(directory).epoch_entries == [EpochEntry(0, 0), EpochEntry(1, 8), EpochEntry(2, 16)]


def test_log_start_and_high_watermark_from_checkpoints_are_clamped(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    write_log(directory)
    log = reopen(directory, log_start_offset=5, high_watermark=99)
    assert (log.log_start_offset, log.high_watermark, log.log_end_offset) == (5, 20, 20)
    log = reopen(directory, log_start_offset=0, high_watermark=3)
    assert log.high_watermark == 3


def test_a_log_start_beyond_the_data_starts_the_log_afresh(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    write_log(directory)
    log = reopen(directory, log_start_offset=50)
    assert (log.log_start_offset, log.log_end_offset, log.segment_base_offsets) == (50, 50, [50])


# --- properties -----------------------------------------------------------------------------------------

_batch_shapes = st.lists(st.tuples(st.integers(1, 5), st.integers(0, 300)), min_size=1, max_size=25)


@settings(max_examples=60, deadline=None)
@given(_batch_shapes, st.integers(61, 3000), st.integers(0, 500), st.integers(50, 5000))
def test_appends_read_back_exactly(
    shapes: list[tuple[int, int]], segment_bytes: int, index_interval: int, max_bytes: int
) -> None:
    """Follower appends (offsets set) read back byte for byte, in any read size, across segments."""
    batches = []
    offset = 0
    for records, size in shapes:
        batches.append(batch(records, size, base_offset=offset, epoch=offset // 7))
        offset += records
    segment_bytes = max(segment_bytes, max(len(b) for b in batches))
    with tempfile.TemporaryDirectory() as root:
        log = Log(Path(root) / "t-0", LogConfig(segment_bytes=segment_bytes, index_interval_bytes=index_interval))
        for data in batches:
            log.append_as_follower(data)
        read = b""
        position = 0
        while position < log.log_end_offset:
            chunk = log.read(position, max_bytes).records
            assert chunk
            read += chunk
            position = spans(chunk)[-1][1] + 1
        assert read == b"".join(batches)
        log.close()
        reopened = Log(Path(root) / "t-0", LogConfig(segment_bytes=segment_bytes))
        assert reopened.log_end_offset == offset
        assert b"".join(reopened.read(base, 1).records for base in _bases(batches)) == b"".join(batches)
        reopened.close()


def _bases(batches: list[bytes]) -> list[int]:
    return [next(iter_batches(data)).header.base_offset for data in batches]


@settings(max_examples=80, deadline=None)
@given(_batch_shapes, st.floats(0, 1), st.integers(0, 300))
def test_recovery_keeps_exactly_the_whole_batches_before_a_cut(
    shapes: list[tuple[int, int]], where: float, index_interval: int
) -> None:
    with tempfile.TemporaryDirectory() as root:
        directory = Path(root) / "t-0"
        log = Log(directory, LogConfig(index_interval_bytes=index_interval))
        appended = [log.append_as_leader(batch(records, size), leader_epoch=3) for records, size in shapes]
        stored = log.read(0, 1 << 30).records
        log.close()
        cut = round(where * len(stored))
        with open(directory / FIRST_LOG, "r+b") as file:
            file.truncate(cut)
        whole = [info for info in appended if info.valid_bytes and _end(appended, info) <= cut]
        recovered = Log(directory, LogConfig(index_interval_bytes=index_interval))
        assert recovered.log_end_offset == (whole[-1].last_offset + 1 if whole else 0)
        kept = recovered.read(0, 1 << 30).records if whole else b""
        assert kept == stored[: sum(info.valid_bytes for info in whole)]
        assert recovered.epoch_entries == ([EpochEntry(3, 0)] if whole else [])
        for info in whole:  # the rebuilt index finds every batch
            assert spans(recovered.read(info.last_offset, 1).records) == [(info.first_offset, info.last_offset)]
        recovered.close()


def _end(appended: list, info: object) -> int:
    """Byte position where `info`'s batch ends in the segment."""
    return sum(a.valid_bytes for a in appended[: appended.index(info) + 1])


def test_epochs_are_rebuilt_around_damage_below_the_recovery_point(tmp_path: Path) -> None:
    directory = tmp_path / "t-0"
    size = len(batch(records=2, size=20))
    log, _ = write_log(directory, segment_bytes=3 * size + 10)  # segments at 0, 6, 12, 18
    log.close()
    first = directory / FIRST_LOG
    data = bytearray(first.read_bytes())
    data[size + 16] = 7  # batch 1's magic: the header no longer parses, but the index does not point there
    first.write_bytes(data)
    (directory / LEADER_EPOCH_CHECKPOINT).write_text("garbage\n")
    log = reopen(directory, had_clean_shutdown=True)
    assert log.log_end_offset == 20
    assert log.epoch_entries == [EpochEntry(0, 0), EpochEntry(1, 8), EpochEntry(2, 16)]

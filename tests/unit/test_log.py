"""Log: appends as leader and follower, reads, rolling, the sparse index, high watermark, truncation,
retention, timestamps, live config, deletion and I/O failure."""

from __future__ import annotations

import contextlib
import os
import struct
from pathlib import Path

import pytest

from kafkaops.cluster.common.errors import (
    CorruptMessageError,
    LogDirFailureError,
    LogError,
    MessageTooLargeError,
    OffsetOutOfRangeError,
    OffsetsOutOfOrderError,
    RecordListTooLargeError,
    UnexpectedAppendOffsetError,
)
from kafkaops.cluster.log import EpochEntry, Log, LogConfig, TimestampOffset
from kafkaops.cluster.log.log import SegmentSummary, segments_to_delete
from kafkaops.cluster.protocol.records import Record, build_batch, compute_crc, iter_batches, iter_records

T0 = 1_700_000_000_000


class Clock:
    def __init__(self, ms: int = T0) -> None:
        self.ms = ms

    def __call__(self) -> float:
        return self.ms / 1000


def batch(records: int = 1, size: int = 10, timestamp: int = T0, base_offset: int = 0, epoch: int = -1) -> bytes:
    return build_batch(
        [Record(base_offset + i, timestamp, None, b"x" * size) for i in range(records)], partition_leader_epoch=epoch
    )


def spans(records: bytes) -> list[tuple[int, int]]:
    """(first, last) offset of each batch."""
    return [(b.header.base_offset, b.header.last_offset) for b in iter_batches(records)]


def open_log(tmp_path: Path, clock: Clock | None = None, **config: int) -> Log:
    return Log(tmp_path / "orders-0", LogConfig(**config), clock=clock or Clock())


# --- appending and reading ------------------------------------------------------------------------------


def test_leader_append_assigns_offsets_and_epoch_in_place(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    first = batch(records=3)
    info = log.append_as_leader(first, leader_epoch=7)
    assert (info.first_offset, info.last_offset, info.batch_count, info.valid_bytes) == (0, 2, 1, len(first))
    second = batch(records=2)
    assert log.append_as_leader(second, leader_epoch=7).first_offset == 3
    assert log.log_end_offset == 5
    stored = log.read(0, 1 << 20).records
    assert stored == (
        struct.pack(">q", 0) + first[8:12] + struct.pack(">i", 7) + first[16:]
        + struct.pack(">q", 3) + second[8:12] + struct.pack(">i", 7) + second[16:]
    )  # fmt: skip
    for stored_batch in iter_batches(stored):  # the CRC is untouched and still right
        assert compute_crc(stored_batch.data) == stored_batch.header.crc
    assert first[:8] == bytes(8)  # the caller's buffer is not modified


def test_log_files_are_kafkas(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    data = batch()
    log.append_as_leader(data, 0)
    log.close()
    directory = tmp_path / "orders-0"
    assert sorted(p.name for p in directory.iterdir()) == [
        "00000000000000000000.index",
        "00000000000000000000.log",
        "00000000000000000000.timeindex",
        "leader-epoch-checkpoint",
    ]
    assert (directory / "00000000000000000000.log").read_bytes() == bytes(8) + data[8:12] + bytes(4) + data[16:]
    # on close the segment's max timestamp goes into the time index: timestamp INT64, relative offset INT32
    assert (directory / "00000000000000000000.timeindex").read_bytes() == struct.pack(">qi", T0, 0)


def descriptors_under(directory: Path) -> int:
    """How many of this process's open descriptors point into `directory`."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            count += os.readlink(f"/proc/self/fd/{fd}").startswith(str(directory))
    return count


def test_a_log_holds_no_descriptor_until_it_is_used(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.read(0, 1000)
    log.flush()
    assert descriptors_under(tmp_path / "orders-0") == 0
    log.close()
    reopened = open_log(tmp_path)
    assert descriptors_under(tmp_path / "orders-0") == 0
    reopened.append_as_leader(batch(), leader_epoch=0)
    assert descriptors_under(tmp_path / "orders-0") >= 1
    assert spans(reopened.read(0, 1000).records) == [(0, 0)]
    reopened.close()
    assert descriptors_under(tmp_path / "orders-0") == 0


def test_reads_return_whole_batches_from_the_one_holding_the_offset(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    for _ in range(5):
        log.append_as_leader(batch(records=3), 0)
    assert spans(log.read(0, 1 << 20).records) == [(0, 2), (3, 5), (6, 8), (9, 11), (12, 14)]
    assert spans(log.read(4, 1 << 20).records) == [(3, 5), (6, 8), (9, 11), (12, 14)]  # mid-batch: whole batch
    one = len(batch(records=3))
    assert spans(log.read(4, 2 * one + 5).records) == [(3, 5), (6, 8)]  # never a partial batch
    assert spans(log.read(4, 1).records) == [(3, 5)]  # min_one_batch: the first batch even if too big
    assert log.read(4, 1, min_one_batch=False).records == b""
    result = log.read(15, 1 << 20)
    assert (result.records, result.log_start_offset, result.log_end_offset) == (b"", 0, 15)


def test_reads_stop_below_max_offset(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    for _ in range(4):
        log.append_as_leader(batch(records=2), 0)
    assert spans(log.read(0, 1 << 20, max_offset=4).records) == [(0, 1), (2, 3)]
    assert spans(log.read(0, 1 << 20, max_offset=5).records) == [(0, 1), (2, 3)]  # batch 4..5 is not wholly below
    assert log.read(4, 1 << 20, max_offset=4).records == b""
    assert log.read(6, 1 << 20, max_offset=4).records == b""  # above the high watermark: empty, no error


@pytest.mark.parametrize("offset", [-1, 3])
def test_reads_outside_the_log_are_out_of_range(tmp_path: Path, offset: int) -> None:
    log = open_log(tmp_path)
    log.append_as_leader(batch(records=2), 0)
    with pytest.raises(OffsetOutOfRangeError, match="offset .* for partition orders-0, but we only have log segments"):
        log.read(offset, 100)


def test_follower_append_keeps_the_leaders_bytes(tmp_path: Path) -> None:
    leader = open_log(tmp_path)
    for epoch in (1, 1, 2):
        leader.append_as_leader(batch(records=2), epoch)
    fetched = leader.read(0, 1 << 20).records
    follower = Log(tmp_path / "follower" / "orders-0", LogConfig())
    info = follower.append_as_follower(fetched)
    assert (info.first_offset, info.last_offset, info.batch_count) == (0, 5, 3)
    assert follower.read(0, 1 << 20).records == fetched
    assert follower.epoch_entries == [EpochEntry(1, 0), EpochEntry(2, 4)]


def test_follower_skips_a_batch_cut_short_by_the_fetch_size(tmp_path: Path) -> None:
    data = batch(base_offset=0) + batch(base_offset=1)
    log = open_log(tmp_path)
    info = log.append_as_follower(data[:-3])
    assert (info.batch_count, log.log_end_offset) == (1, 1)


def test_follower_append_below_the_log_end_is_refused(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append_as_follower(batch(records=2, base_offset=0))
    with pytest.raises(UnexpectedAppendOffsetError) as caught:
        log.append_as_follower(batch(base_offset=1))
    assert (caught.value.first_offset, caught.value.log_end_offset) == (1, 2)
    log.append_as_follower(batch(base_offset=10))  # a gap is allowed, as in Kafka
    assert log.log_end_offset == 11


def test_follower_batches_that_overlap_are_refused(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    with pytest.raises(OffsetsOutOfOrderError):
        log.append_as_follower(batch(records=2, base_offset=0) + batch(base_offset=1))
    assert log.log_end_offset == 0


def test_nothing_to_append(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    info = log.append_as_follower(b"")
    assert (info.first_offset, info.batch_count, log.log_end_offset) == (-1, 0, 0)
    assert log.append_as_leader(b"", 0).batch_count == 0


def test_corrupt_batches_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    damaged = bytearray(batch())
    damaged[-1] ^= 0xFF
    with pytest.raises(CorruptMessageError, match="CRC"):
        log.append_as_leader(bytes(damaged), 0)
    with pytest.raises(CorruptMessageError):
        log.append_as_follower(bytes(damaged))
    assert (log.log_end_offset, log.size_in_bytes) == (0, 0)


def test_size_limits(tmp_path: Path) -> None:
    big = batch(size=500)
    log = open_log(tmp_path, max_message_bytes=len(big) - 1, segment_bytes=2 * len(big) - 1)
    with pytest.raises(MessageTooLargeError, match="larger than max.message.bytes"):
        log.append_as_leader(big, 0)
    log.append_as_follower(big)  # replication is not bound by max.message.bytes, as in Kafka
    with pytest.raises(RecordListTooLargeError, match="exceeds the maximum configured segment size"):
        log.append_as_follower(batch(size=500, base_offset=1) + batch(size=500, base_offset=2))


# --- rolling and the index ------------------------------------------------------------------------------


def test_segments_roll_on_segment_bytes(tmp_path: Path) -> None:
    size = len(batch())
    log = open_log(tmp_path, segment_bytes=3 * size)
    for _ in range(7):
        log.append_as_leader(batch(), 0)
    assert log.segment_base_offsets == [0, 3, 6]
    names = sorted(p.name for p in (tmp_path / "orders-0").glob("*.log"))
    assert names == ["00000000000000000000.log", "00000000000000000003.log", "00000000000000000006.log"]
    assert spans(log.read(4, 1 << 20).records) == [(4, 4), (5, 5)]  # one segment per read, as Kafka
    assert spans(log.read(6, 1 << 20).records) == [(6, 6)]


def test_segments_roll_on_segment_ms_by_record_timestamps(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path, clock, segment_ms=1000)
    log.append_as_leader(batch(timestamp=T0), 0)
    log.append_as_leader(batch(timestamp=T0 + 1000), 0)  # not more than segment.ms after the first batch
    assert log.segment_base_offsets == [0]
    log.append_as_leader(batch(timestamp=T0 + 1001), 0)
    assert log.segment_base_offsets == [0, 2]


def test_segments_roll_on_segment_ms_by_the_clock_without_timestamps(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path, clock, segment_ms=1000)
    log.append_as_leader(batch(timestamp=-1), 0)
    clock.ms += 1000
    log.append_as_leader(batch(timestamp=-1), 0)
    assert log.segment_base_offsets == [0]
    clock.ms += 1
    log.append_as_leader(batch(timestamp=-1), 0)
    assert log.segment_base_offsets == [0, 2]


def test_an_empty_segment_never_rolls_on_time(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path, clock, segment_ms=1)
    clock.ms += 10_000
    log.append_as_leader(batch(timestamp=-1), 0)
    assert log.segment_base_offsets == [0]


def test_a_full_index_rolls(tmp_path: Path) -> None:
    # 24 bytes: three offset-index entries (8 bytes), two time-index entries (12 bytes); with one timestamp
    # the time index gets one entry, so the offset index fills first: entries for batches 1, 2, 3.
    log = open_log(tmp_path, index_interval_bytes=0, segment_index_bytes=24)
    for _ in range(6):
        log.append_as_leader(batch(), 0)
    assert log.segment_base_offsets == [0, 4]


def test_index_gets_an_entry_once_more_than_the_interval_went_by(tmp_path: Path) -> None:
    size = len(batch())
    log = open_log(tmp_path, index_interval_bytes=2 * size)
    for _ in range(8):
        log.append_as_leader(batch(), 0)
    entries = (tmp_path / "orders-0" / "00000000000000000000.index").read_bytes()
    # Kafka's rule: an entry (batch last offset, batch position) when > interval bytes since the last one:
    # before batches 3 and 6 (0-based), 3 batches = more than 2 batches' worth each time.
    assert list(struct.iter_unpack(">ii", entries)) == [(3, 3 * size), (6, 6 * size)]
    for offset in range(8):
        assert spans(log.read(offset, 1).records) == [(offset, offset)]


def test_index_lookups_across_many_segments(tmp_path: Path) -> None:
    log = open_log(tmp_path, index_interval_bytes=100, segment_bytes=2000)
    expected = []
    for i in range(60):
        info = log.append_as_leader(batch(records=1 + i % 4, size=7 * i), 0)
        expected.append((info.first_offset, info.last_offset))
    assert len(log.segment_base_offsets) > 5
    for first, last in expected:
        for offset in range(first, last + 1):
            assert spans(log.read(offset, 1).records) == [(first, last)]


# --- high watermark and log start -------------------------------------------------------------------------


def test_high_watermark_never_passes_the_log_end_nor_goes_back(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append_as_leader(batch(records=5), 0)
    assert log.update_high_watermark(3) == 3
    assert log.update_high_watermark(2) == 3
    assert log.update_high_watermark(99) == 5
    assert log.read(0, 100).high_watermark == 5
    log.truncate_to(0)
    assert log.high_watermark == 0


def test_log_start_offset_moves_up_to_the_high_watermark_only(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    for epoch in (1, 2):
        log.append_as_leader(batch(records=5), epoch)
    log.update_high_watermark(8)
    with pytest.raises(OffsetOutOfRangeError, match="larger than the high watermark 8"):
        log.maybe_increment_log_start_offset(9)
    assert log.maybe_increment_log_start_offset(7)
    assert not log.maybe_increment_log_start_offset(6)
    assert log.epoch_entries == [EpochEntry(2, 7)]
    with pytest.raises(OffsetOutOfRangeError):
        log.read(6, 100)
    assert spans(log.read(7, 100).records) == [(5, 9)]  # the batch holding the log start, whole


# --- truncation -----------------------------------------------------------------------------------------


def test_truncate_to_a_batch_boundary(tmp_path: Path) -> None:
    size = len(batch(records=2))
    log = open_log(tmp_path, segment_bytes=2 * size)
    for epoch in (1, 1, 2, 2, 3):
        log.append_as_leader(batch(records=2), epoch)
    log.update_high_watermark(10)
    assert log.segment_base_offsets == [0, 4, 8]
    assert log.truncate_to(6)
    assert (log.log_end_offset, log.high_watermark, log.segment_base_offsets) == (6, 6, [0, 4])
    assert not (tmp_path / "orders-0" / "00000000000000000008.log").exists()
    assert log.epoch_entries == [EpochEntry(1, 0), EpochEntry(2, 4)]
    assert spans(log.read(0, 1 << 20).records) == [(0, 1), (2, 3)]
    assert spans(log.read(4, 1 << 20).records) == [(4, 5)]
    assert log.append_as_leader(batch(), 4).first_offset == 6
    assert not log.truncate_to(7)  # at the log end: nothing to do


def test_truncate_inside_a_batch_removes_it_whole(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append_as_leader(batch(records=3), 0)
    log.append_as_leader(batch(records=3), 0)
    log.truncate_to(4)
    assert log.log_end_offset == 3
    leader_batch = batch(records=3, base_offset=3)
    log.append_as_follower(leader_batch)  # the next fetch brings the batch back whole
    assert log.log_end_offset == 6


def test_truncate_below_the_first_segment_starts_afresh(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.truncate_fully_and_start_at(100)
    log.append_as_leader(batch(), 0)
    log.truncate_to(50)
    assert (log.log_start_offset, log.log_end_offset, log.segment_base_offsets) == (50, 50, [50])


def test_truncate_fully_and_start_at(tmp_path: Path) -> None:
    log = open_log(tmp_path, segment_bytes=len(batch()))
    for _ in range(3):
        log.append_as_leader(batch(), 5)
    log.update_high_watermark(3)
    log.truncate_fully_and_start_at(42)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark, log.recovery_point) == (42, 42, 42, 42)
    assert log.epoch_entries == []
    assert sorted(p.name for p in (tmp_path / "orders-0").glob("*.log")) == ["00000000000000000042.log"]
    assert log.append_as_leader(batch(), 6).first_offset == 42
    with pytest.raises(OffsetOutOfRangeError):
        log.read(0, 100)


def test_negative_truncation_offsets_are_a_caller_bug(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    with pytest.raises(ValueError):
        log.truncate_to(-1)
    with pytest.raises(ValueError):
        log.truncate_fully_and_start_at(-1)


# --- retention ------------------------------------------------------------------------------------------


def _three_segment_log(tmp_path: Path, clock: Clock, **config: int) -> Log:
    size = len(batch())
    log = open_log(tmp_path, clock, segment_bytes=2 * size, **config)
    for i in range(6):
        log.append_as_leader(batch(timestamp=T0 + i * 1000), 0)
    assert log.segment_base_offsets == [0, 2, 4]
    return log


def test_retention_bytes_deletes_the_oldest_whole_segments(tmp_path: Path) -> None:
    size = len(batch())
    log = _three_segment_log(tmp_path, Clock(), retention_bytes=3 * size)
    log.update_high_watermark(6)
    assert log.delete_old_segments() == 1  # 6 batches, keep 3: deleting 2 segments would leave 2
    assert (log.log_start_offset, log.segment_base_offsets) == (2, [2, 4])
    assert not (tmp_path / "orders-0" / "00000000000000000000.log").exists()
    assert not (tmp_path / "orders-0" / "00000000000000000000.index").exists()
    with pytest.raises(OffsetOutOfRangeError):
        log.read(1, 100)


def test_retention_never_passes_the_high_watermark(tmp_path: Path) -> None:
    log = _three_segment_log(tmp_path, Clock(), retention_bytes=0)
    log.update_high_watermark(3)
    assert log.delete_old_segments() == 1  # segment 2..3 ends at 4 > HW 3
    assert log.segment_base_offsets == [2, 4]


def test_retention_ms_by_largest_timestamp(tmp_path: Path) -> None:
    clock = Clock(T0 + 60_000)
    log = _three_segment_log(tmp_path, clock, retention_ms=58_000)
    log.update_high_watermark(6)
    # segment 0 holds timestamps up to T0+1000: 59 s old, over 58 s; segment 2 (T0+3000) is 57 s old
    assert log.delete_old_segments() == 1
    assert log.segment_base_offsets == [2, 4]


def test_an_idle_log_expires_completely_by_rolling_first(tmp_path: Path) -> None:
    clock = Clock(T0 + 3_600_000)
    log = _three_segment_log(tmp_path, clock, retention_ms=1000)
    log.update_high_watermark(6)
    assert log.delete_old_segments() == 3
    assert (log.log_start_offset, log.log_end_offset, log.segment_base_offsets) == (6, 6, [6])
    assert log.delete_old_segments() == 0  # the new active segment is empty
    assert log.append_as_leader(batch(), 0).first_offset == 6


def test_compacted_topics_are_not_deleted_by_retention(tmp_path: Path) -> None:
    log = _three_segment_log(tmp_path, Clock(T0 + 3_600_000), retention_ms=1000)
    log.update_config(LogConfig.from_mapping({"cleanup.policy": "compact"}, log.config))
    log.update_high_watermark(6)
    assert log.delete_old_segments() == 0


def test_segments_below_the_log_start_offset_are_deleted(tmp_path: Path) -> None:
    log = _three_segment_log(tmp_path, Clock())
    log.update_high_watermark(6)
    log.maybe_increment_log_start_offset(5)
    assert log.delete_old_segments() == 2
    assert (log.log_start_offset, log.segment_base_offsets) == (5, [4])


def test_segments_to_delete_is_kafkas_rule() -> None:
    config = LogConfig(retention_bytes=250, retention_ms=-1)
    segments = [SegmentSummary(0, 100, 0), SegmentSummary(10, 100, 0), SegmentSummary(20, 100, 0)]
    kwargs = {"config": config, "now_ms": 0, "log_start_offset": 0, "log_end_offset": 30}
    assert segments_to_delete(segments, high_watermark=30, **kwargs) == 0  # 300 - 100 < 250 after one
    assert segments_to_delete(segments, high_watermark=30, **{**kwargs, "config": LogConfig(retention_bytes=100)}) == 2
    assert segments_to_delete(segments, high_watermark=30, **{**kwargs, "config": LogConfig(retention_bytes=0)}) == 3
    assert segments_to_delete(segments, high_watermark=19, **{**kwargs, "config": LogConfig(retention_bytes=0)}) == 1
    empty_last = [*segments[:2], SegmentSummary(20, 0, 0)]
    assert segments_to_delete(empty_last, high_watermark=20, **{**kwargs, "config": LogConfig(retention_bytes=0),
                                                               "log_end_offset": 20}) == 2  # fmt: skip


# --- timestamps, config, deletion, failures ---------------------------------------------------------------


def test_offset_for_timestamp(tmp_path: Path) -> None:
    log = open_log(tmp_path, index_interval_bytes=0, segment_bytes=400)
    for i in range(10):
        log.append_as_leader(
            build_batch([Record(0, T0 + 10 * i, None, b"a"), Record(1, T0 + 10 * i + 5, None, b"b")]), 3
        )
    assert log.offset_for_timestamp(T0) == TimestampOffset(T0, 0, 3)
    assert log.offset_for_timestamp(T0 + 41) == TimestampOffset(T0 + 45, 9, 3)  # inside a batch
    assert log.offset_for_timestamp(T0 + 50) == TimestampOffset(T0 + 50, 10, 3)
    assert log.offset_for_timestamp(T0 + 96) is None
    log.update_high_watermark(20)
    log.maybe_increment_log_start_offset(11)
    assert log.offset_for_timestamp(T0) == TimestampOffset(T0 + 55, 11, 3)  # never below the log start


def test_config_changes_apply_live(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append_as_leader(batch(), 0)
    log.update_config(LogConfig(segment_bytes=len(batch())))
    log.append_as_leader(batch(), 0)
    assert log.segment_base_offsets == [0, 1]


def test_delete_removes_the_directory(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.append_as_leader(batch(), 0)
    (log.directory / "something-else").mkdir()  # not a log's, but removed with it
    (log.directory / "something-else" / "inside").write_bytes(b"x")
    log.delete()
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(LogError, match="closed"):
        log.read(0, 100)


def test_a_closed_log_refuses_work(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    log.close()
    log.close()
    with pytest.raises(LogError, match="The log of orders-0 is closed"):
        log.append_as_leader(batch(), 0)


def test_an_io_error_takes_the_log_offline_without_tearing_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failures: list[LogDirFailureError] = []
    log = Log(tmp_path / "orders-0", LogConfig(), on_dir_failure=failures.append)
    log.append_as_leader(batch(), 0)
    real_pwrite = os.pwrite

    def disk_full(fd: int, data: bytes, position: int) -> int:
        real_pwrite(fd, bytes(data)[:20], position)  # a partial write, then the error
        raise OSError(28, "No space left on device")

    def disk_full_v(fd: int, buffers: list[bytes], position: int) -> int:
        return disk_full(fd, b"".join(buffers), position)

    monkeypatch.setattr(os, "pwrite", disk_full)
    monkeypatch.setattr(os, "pwritev", disk_full_v)  # a leader's append: the patched prefix, then the batch
    with pytest.raises(LogDirFailureError, match="No space left on device") as caught:
        log.append_as_leader(batch(), 0)
    assert caught.value.log_dir == str(tmp_path)
    assert failures == [caught.value]
    monkeypatch.undo()
    assert log.offline
    with pytest.raises(LogDirFailureError, match="offline"):
        log.read(0, 100)
    log.close()
    assert (tmp_path / "orders-0" / "00000000000000000000.log").stat().st_size == len(batch())
    reopened = Log(tmp_path / "orders-0", LogConfig())
    assert reopened.log_end_offset == 1


def test_records_read_back_are_the_records_written(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    records = [Record(0, T0, b"k", b"v", (("h", b"x"),)), Record(1, T0 + 1, None, None)]
    log.append_as_leader(build_batch(records), 0)
    log.append_as_leader(build_batch(records), 0)
    read = [r for b in iter_batches(log.read(0, 1 << 20).records) for r in iter_records(b)]
    assert [(r.offset, r.key, r.value, r.headers) for r in read] == [
        (0, b"k", b"v", (("h", b"x"),)),
        (1, None, None, ()),
        (2, b"k", b"v", (("h", b"x"),)),
        (3, None, None, ()),
    ]

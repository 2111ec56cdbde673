"""The log cleaner's pure parts: the offset map, what a batch keeps, tombstone horizons, the dirty-ratio
choice, compaction lags, segment grouping; and the batch rebuilding of records.py."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkaops.cluster.common.errors import CorruptMessageError
from kafkaops.cluster.log import LogConfig
from kafkaops.cluster.log.log_cleaner import filter_batch, group_segments_by_size
from kafkaops.cluster.log.log_cleaner_manager import (
    LogToClean,
    choose_filthiest,
    cleanable_offsets,
    max_compaction_delay,
)
from kafkaops.cluster.log.offset_map import OffsetMap
from kafkaops.cluster.log.segment_swap import LogSnapshot, SegmentSnapshot
from kafkaops.cluster.protocol.records import (
    Batch,
    ControlType,
    Record,
    batch_body,
    build_batch,
    build_batch_from_spans,
    build_control_batch,
    build_empty_batch,
    build_retained_batch,
    iter_batches,
    iter_records,
    read_header,
    scan_records,
)

T0 = 1_700_000_000_000


def one_batch(data: bytes) -> Batch:
    (batch,) = list(iter_batches(data))
    return batch


def keyed(offset: int, key: str | None, value: str | None, timestamp: int = T0) -> Record:
    return Record(offset, timestamp, None if key is None else key.encode(), None if value is None else value.encode())


def keep(batch: Batch, offset_map: OffsetMap, producers: dict[int, int] | None = None, now: int = T0) -> bytes | None:
    kept = filter_batch(batch, offset_map, producers or {}, now_ms=now, delete_retention_ms=1000)
    return None if kept is None else bytes(kept)


def mapped(*entries: tuple[str, int]) -> OffsetMap:
    offset_map = OffsetMap(24 * 100)
    for key, offset in entries:
        offset_map.put(key.encode(), offset)
    return offset_map


# --- the offset map --------------------------------------------------------------------------------------


def test_offset_map_keeps_the_latest_offset_per_key_and_its_bound() -> None:
    offset_map = OffsetMap(24 * 2)
    assert offset_map.slots == 2
    assert offset_map.get(b"a") == -1 and offset_map.latest_offset == -1
    offset_map.put(b"a", 3)
    offset_map.put(b"a", 7)
    offset_map.put(b"b", 9)
    assert (offset_map.get(b"a"), offset_map.get(b"b"), len(offset_map), offset_map.latest_offset) == (7, 9, 2, 9)
    offset_map.put(b"b", 10)  # a known key still fits
    with pytest.raises(ValueError, match="full offset map"):
        offset_map.put(b"c", 11)
    offset_map.update_latest_offset(12)
    assert offset_map.latest_offset == 12 and offset_map.utilization == 1.0
    offset_map.clear()
    assert (len(offset_map), offset_map.get(b"a"), offset_map.latest_offset) == (0, -1, -1)


# --- what a batch keeps ----------------------------------------------------------------------------------


def test_a_batch_whose_records_are_all_latest_is_kept_byte_for_byte() -> None:
    data = build_batch([keyed(10, "a", "1"), keyed(11, "b", "2")], partition_leader_epoch=4)
    kept = keep(one_batch(data), mapped(("a", 10), ("b", 11)))
    assert kept is not None and bytes(kept) == data


def test_a_partly_kept_batch_keeps_base_offset_last_offset_producer_fields_and_record_offsets() -> None:
    records = [keyed(20, "a", "old", T0), keyed(21, "b", "kept", T0 + 5), keyed(22, "c", "old", T0 + 9)]
    data = build_batch(records, partition_leader_epoch=3, producer_id=77, producer_epoch=2, base_sequence=40)
    kept = keep(one_batch(data), mapped(("a", 30), ("b", 21), ("c", 31)))
    assert kept is not None
    batch = one_batch(bytes(kept))  # the CRC checks
    header, original = batch.header, read_header(data)
    assert (header.base_offset, header.last_offset, header.records_count) == (20, 22, 1)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (77, 2, 40)
    assert header.partition_leader_epoch == 3 and header.attributes == original.attributes
    assert [(r.offset, r.key, r.value, r.timestamp) for r in iter_records(batch)] == [(21, b"b", b"kept", T0 + 5)]
    # the records' bytes are copied, so the base timestamp stays (Kafka re-encodes from the first kept one)
    assert (header.base_timestamp, header.max_timestamp) == (T0, T0 + 5)


def test_a_batch_with_nothing_kept_is_dropped_unless_it_is_its_producers_last() -> None:
    data = build_batch([keyed(5, "a", "old")], producer_id=9, producer_epoch=1, base_sequence=0)
    newer = mapped(("a", 6))
    assert keep(one_batch(data), newer, {9: 8}) is None
    empty = keep(one_batch(data), newer, {9: 5})
    assert empty is not None
    batch = one_batch(bytes(empty))
    assert (batch.header.base_offset, batch.header.last_offset, batch.header.records_count) == (5, 5, 0)
    assert (batch.header.producer_id, batch.header.producer_epoch, batch.header.base_sequence) == (9, 1, 0)
    assert list(iter_records(batch)) == []
    assert bytes(empty) == build_empty_batch(read_header(data))
    # next time round the empty batch is kept only while it is still the producer's last
    assert keep(batch, newer, {9: 5}) is not None
    assert keep(batch, newer, {9: 40}) is None


def test_keyless_records_go_and_a_kept_tombstone_stamps_its_batch_with_a_delete_horizon() -> None:
    data = build_batch([keyed(0, "a", None, T0 - 7), keyed(1, None, "no key"), keyed(2, "b", "v", T0 + 3)])
    offsets = mapped(("a", 0), ("b", 2))
    kept = keep(one_batch(data), offsets, now=T0)
    assert kept is not None
    batch = one_batch(kept)
    assert batch.header.delete_horizon_ms == T0 + 1000  # now + delete.retention.ms
    assert [(r.offset, r.key, r.value, r.timestamp) for r in iter_records(batch)] == [
        (0, b"a", None, T0 - 7),
        (2, b"b", b"v", T0 + 3),
    ]
    # within the horizon the batch stays as it is; from the horizon on its tombstone goes
    assert keep(batch, offsets, now=T0 + 999) == kept
    later = keep(batch, offsets, now=T0 + 1000)
    assert later is not None
    survivors = one_batch(later)
    assert [(r.offset, r.key, r.timestamp) for r in iter_records(survivors)] == [(2, b"b", T0 + 3)]
    assert survivors.header.delete_horizon_ms == T0 + 1000
    # a batch of nothing but an expired tombstone goes whole
    only = one_batch(build_retained_batch(read_header(data), [keyed(0, "a", None)], delete_horizon_ms=T0))
    assert keep(only, offsets, now=T0) is None
    assert keep(only, offsets, now=T0 - 1) is not None


def test_records_beyond_the_mapped_range_are_kept() -> None:
    data = build_batch([keyed(50, "a", "later")])
    kept = keep(one_batch(data), mapped(("a", 10)))
    assert kept is not None and bytes(kept) == data


def test_control_batches_are_kept_as_they_are() -> None:
    data = build_control_batch(ControlType.COMMIT, offset=3, timestamp=T0, producer_id=4, producer_epoch=0)
    kept = keep(one_batch(data), mapped())
    assert kept is not None and bytes(kept) == data


def test_gzip_batches_are_rebuilt_gzipped() -> None:
    from kafkaops.cluster.protocol.records import Compression

    data = build_batch([keyed(0, "a", "1"), keyed(1, "a", "2")], compression=Compression.GZIP)
    kept = keep(one_batch(data), mapped(("a", 1)))
    assert kept is not None
    batch = one_batch(bytes(kept))
    assert batch.header.compression == Compression.GZIP
    assert [(r.offset, r.value) for r in iter_records(batch)] == [(1, b"2")]


def test_build_retained_batch_of_a_log_append_time_batch_keeps_its_time() -> None:
    from kafkaops.cluster.protocol.records import set_log_append_time

    buf = bytearray(build_batch([keyed(0, "a", "1"), keyed(1, "b", "2")]))
    set_log_append_time(buf, 0, T0 + 1000)
    header = read_header(buf)
    rebuilt = one_batch(build_retained_batch(header, [Record(1, T0 + 1000, b"b", b"2")]))
    assert rebuilt.header.log_append_time and rebuilt.header.max_timestamp == T0 + 1000
    assert [(r.offset, r.timestamp) for r in iter_records(rebuilt)] == [(1, T0 + 1000)]


@settings(max_examples=40)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.binary(max_size=300)),
            st.one_of(st.none(), st.binary(max_size=300)),
            st.integers(-(2**40), 2**40),
            st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=20))), max_size=3),
        ),
        min_size=1,
        max_size=20,
    ),
    st.integers(1, 200),
)
def test_scan_records_finds_what_iter_records_reads(
    fields: list[tuple[bytes | None, bytes | None, int, list[tuple[str, bytes | None]]]], gap: int
) -> None:
    records = [
        Record(i * gap, T0 + delta, key, value, tuple(headers)) for i, (key, value, delta, headers) in enumerate(fields)
    ]
    batch = one_batch(build_batch(records))
    body = batch_body(batch)
    spans = scan_records(body, batch.header.records_count)
    decoded = list(iter_records(batch))
    assert [(batch.header.base_offset + s.offset_delta, s.key, s.has_value) for s in spans] == [
        (r.offset, r.key, r.value is not None) for r in decoded
    ]
    assert [batch.header.base_timestamp + s.timestamp_delta for s in spans] == [r.timestamp for r in decoded]
    kept = spans[::2]
    rebuilt = one_batch(build_batch_from_spans(batch.header, body, kept, 0))
    assert list(iter_records(rebuilt)) == decoded[::2]


def test_scan_records_refuses_a_body_that_does_not_frame() -> None:
    body = batch_body(one_batch(build_batch([keyed(0, "a", "1"), keyed(1, "b", "2")])))
    with pytest.raises(CorruptMessageError):
        scan_records(body[:-1], 2)
    with pytest.raises(CorruptMessageError):
        scan_records(body + b"\x00", 2)
    with pytest.raises(CorruptMessageError):
        scan_records(b"\x7f" + body[1:], 2)


# --- snapshots: dirty ratio, lags, horizons, groups --------------------------------------------------------


def segment(base: int, size: int, *, modified: int = T0, largest: int = T0, index: int = 0) -> SegmentSnapshot:
    return SegmentSnapshot(base, size, Path(f"/nowhere/{base:020d}.log"), modified, largest, index, index)


def snapshot(
    segments: Sequence[SegmentSnapshot], *, log_start: int = 0, leo: int | None = None, topic: str = "t", **config: str
) -> LogSnapshot:
    names = {
        "min_lag": "min.compaction.lag.ms",
        "max_lag": "max.compaction.lag.ms",
        "ratio": "min.cleanable.dirty.ratio",
    }
    log_config = LogConfig.from_mapping({"cleanup.policy": "compact", **{names[k]: v for k, v in config.items()}})
    end = leo if leo is not None else segments[-1].base_offset + 1
    return LogSnapshot(topic, 0, Path("/nowhere"), tuple(segments), log_start, end, 0, log_config)


def test_cleanable_offsets_run_from_the_checkpoint_to_the_active_segment() -> None:
    snap = snapshot([segment(0, 100), segment(10, 100), segment(20, 100), segment(30, 5)])
    offsets = cleanable_offsets(snap, 10, T0)
    assert (offsets.first_dirty_offset, offsets.first_uncleanable_dirty_offset) == (10, 30)
    assert not offsets.force_update_checkpoint
    # no checkpoint: from the log start; a checkpoint outside [log start, LEO]: reset there
    assert cleanable_offsets(snap, None, T0).first_dirty_offset == 0
    below = cleanable_offsets(snapshot(snap.segments, log_start=12), 5, T0)
    assert (below.first_dirty_offset, below.force_update_checkpoint) == (12, True)
    beyond = cleanable_offsets(snap, 99, T0)
    assert (beyond.first_dirty_offset, beyond.force_update_checkpoint) == (0, True)


def test_min_compaction_lag_protects_the_newest_segments() -> None:
    segs = [segment(0, 100, largest=T0 - 10_000), segment(10, 100, largest=T0 - 500), segment(20, 5)]
    snap = snapshot(segs, min_lag="1000")
    assert cleanable_offsets(snap, 0, T0).first_uncleanable_dirty_offset == 10
    snap = snapshot(segs, min_lag="100000")
    assert cleanable_offsets(snap, 0, T0).first_uncleanable_dirty_offset == 0


def test_the_filthiest_log_above_its_ratio_is_chosen() -> None:
    # clean 100 + dirty 300: 0.75; clean 300 + dirty 100: 0.25
    filthy = snapshot([segment(0, 100), segment(10, 300), segment(20, 1)], topic="filthy")
    tidy = snapshot([segment(0, 300), segment(10, 100), segment(20, 1)], topic="tidy")
    candidates = [LogToClean(tidy, 10, 20), LogToClean(filthy, 10, 20)]
    assert [round(c.cleanable_ratio, 2) for c in candidates] == [0.25, 0.75]
    chosen = choose_filthiest(candidates)
    assert chosen is not None and chosen.snapshot.topic == "filthy"
    strict = snapshot(filthy.segments, ratio="0.8")
    assert choose_filthiest([LogToClean(strict, 10, 20)]) is None
    # past max.compaction.lag.ms, any ratio will do, as long as there are bytes to clean
    assert choose_filthiest([LogToClean(strict, 10, 20, need_compaction_now=True)]) is not None
    assert choose_filthiest([LogToClean(strict, 20, 20, need_compaction_now=True)]) is None
    assert choose_filthiest([LogToClean(snapshot([segment(0, 0)]), 0, 0)]) is None


def test_max_compaction_delay_counts_from_the_oldest_dirty_first_batch() -> None:
    snap = snapshot([segment(0, 10), segment(10, 10), segment(20, 1)], max_lag="1000")
    stamps = {0: T0 - 5000, 10: T0 - 100, 20: T0}
    assert max_compaction_delay(snap, 0, T0, stamps) == 4000
    assert max_compaction_delay(snap, 10, T0, stamps) == 0
    assert max_compaction_delay(snap, 0, T0, {0: -1, 10: T0 - 100}) == 0


def test_segments_are_grouped_within_segment_and_index_sizes() -> None:
    segs = [segment(0, 40, index=8), segment(10, 40, index=8), segment(20, 40, index=8), segment(30, 0)]
    groups = group_segments_by_size(segs, 100, 1000, 30)
    assert [[s.base_offset for s in g] for g in groups] == [[0, 10], [20, 30]]
    groups = group_segments_by_size(segs, 1000, 16, 30)
    assert [[s.base_offset for s in g] for g in groups] == [[0, 10], [20, 30]]
    # a segment joins only if its last offset stays within INT32 of the group's base
    far = [segment(0, 10), segment(2**31 - 100, 10), segment(2**31 - 50, 10)]
    groups = group_segments_by_size(far, 1000, 1000, 2**31 + 10)
    assert [[s.base_offset for s in g] for g in groups] == [[0, 2**31 - 100], [2**31 - 50]]

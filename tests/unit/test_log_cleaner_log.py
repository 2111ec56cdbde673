"""The log cleaner on real segment files: a cleaned log reads the latest value of each key at its offset,
survives a restart, writes `cleaner-offset-checkpoint`, recovers from a crash between the swap's steps,
and applies retention to `compact,delete` logs."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkaops.cluster.log import Log, LogConfig, segment_swap
from kafkaops.cluster.log import log as log_module
from kafkaops.cluster.log.cleaner_config import CleanerConfig
from kafkaops.cluster.log.log_cleaner import LogCleaner
from kafkaops.cluster.log.log_cleaner_manager import CLEANER_OFFSET_CHECKPOINT
from kafkaops.cluster.protocol.records import Record, build_batch, iter_batches, iter_records

T0 = 1_700_000_000_000

Pair = tuple[bytes | None, bytes | None]


class Clock:
    def __init__(self, ms: int = T0) -> None:
        self.ms = ms

    def __call__(self) -> float:
        return self.ms / 1000


def compacted(directory: Path, clock: Clock, **overrides: str) -> Log:
    config = {
        "cleanup.policy": "compact",
        "segment.bytes": "400",
        "min.cleanable.dirty.ratio": "0.01",
        "delete.retention.ms": "1000",
        **overrides,
    }
    return Log(directory / "topic-0", LogConfig.from_mapping(config), clock=clock)


def append(log: Log, pairs: Sequence[Pair], timestamp: int = T0, producer: int = -1) -> None:
    records = [Record(i, timestamp, key, value) for i, (key, value) in enumerate(pairs)]
    log.append_as_leader(
        build_batch(
            records,
            producer_id=producer,
            producer_epoch=0 if producer >= 0 else -1,
            base_sequence=0 if producer >= 0 else -1,
        ),
        leader_epoch=0,
    )


def records_of(log: Log) -> list[Record]:
    found: list[Record] = []
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        data = log.read(offset, 1 << 20).records
        batches = list(iter_batches(data))
        assert batches, f"nothing read at {offset}"
        for batch in batches:
            found.extend(iter_records(batch))
            offset = batch.header.next_offset
    return found


def latest(records: Sequence[Record]) -> dict[bytes | None, tuple[int, bytes | None]]:
    return {r.key: (r.offset, r.value) for r in records}


def cleaner_for(log: Log, clock: Clock) -> LogCleaner:
    return LogCleaner(CleanerConfig(), lambda: {(log.topic, log.partition): log}, clock=clock)


def clean_until_idle(cleaner: LogCleaner) -> int:
    rounds = 0
    while cleaner.clean_once():
        rounds += 1
        assert rounds < 50
    return rounds


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.suffix in (".cleaned", ".swap", ".deleted"))


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_cleaning_keeps_the_latest_record_of_each_key_at_its_offset(tmp_path: Path, clock: Clock) -> None:
    log = compacted(tmp_path, clock)
    for round_ in range(12):
        append(log, [(f"k{i}".encode(), f"v{round_}-{i}".encode()) for i in range(3)])
    before = records_of(log)
    segments_before = len(log.segment_base_offsets)
    size_before = log.size_in_bytes
    assert segments_before > 3
    cleaner = cleaner_for(log, clock)
    assert clean_until_idle(cleaner) >= 1
    after = records_of(log)
    assert latest(after) == latest(before)
    active = log.active_segment_base_offset
    cleaned_keys = [r.key for r in after if r.offset < active]
    assert len(cleaned_keys) == len(set(cleaned_keys))  # one record per key below the active segment
    assert log.size_in_bytes < size_before
    assert leftovers(log.directory) == []
    checkpoint = (tmp_path / CLEANER_OFFSET_CHECKPOINT).read_text()
    assert checkpoint == f"0\n1\ntopic 0 {active}\n"
    # a restart reads the same log (indexes included) and the checkpoint back
    log.close()
    reopened = compacted(tmp_path, clock)
    assert [(r.offset, r.key, r.value) for r in records_of(reopened)] == [(r.offset, r.key, r.value) for r in after]
    assert cleaner_for(reopened, clock).manager.read_checkpoint(tmp_path) == {("topic", 0): active}
    assert not cleaner_for(reopened, clock).clean_once()  # nothing dirty left to clean
    reopened.close()


def test_the_active_segment_is_never_cleaned(tmp_path: Path, clock: Clock) -> None:
    log = compacted(tmp_path, clock, **{"segment.bytes": "100000"})
    for round_ in range(5):
        append(log, [(b"k", f"v{round_}".encode())])
    assert not cleaner_for(log, clock).clean_once()
    assert len(records_of(log)) == 5
    log.close()


def test_tombstones_go_once_their_delete_horizon_has_passed(tmp_path: Path, clock: Clock) -> None:
    log = compacted(tmp_path, clock)
    append(log, [(b"a", b"1"), (b"b", b"1")])
    append(log, [(b"a", None)])
    for round_ in range(6):
        append(log, [(b"filler", f"{round_}".encode() * 50)])
    cleaner = cleaner_for(log, clock)
    clean_until_idle(cleaner)
    assert latest(records_of(log))[b"a"][1] is None  # the tombstone stays for delete.retention.ms
    clock.ms += 999
    for round_ in range(6):
        append(log, [(b"filler", f"{round_}".encode() * 50)])
    clean_until_idle(cleaner)
    assert latest(records_of(log))[b"a"][1] is None
    clock.ms += 1
    for round_ in range(6):
        append(log, [(b"filler", f"{round_}".encode() * 50)])
    clean_until_idle(cleaner)
    remaining = latest(records_of(log))
    assert b"a" not in remaining and remaining[b"b"] == (1, b"1")
    log.close()


def test_a_producers_last_batch_stays_as_an_empty_batch(tmp_path: Path, clock: Clock) -> None:
    log = compacted(tmp_path, clock)
    append(log, [(b"a", b"1")], producer=5)
    for round_ in range(8):
        append(log, [(b"a", f"{round_}".encode() * 40)])
    clean_until_idle(cleaner_for(log, clock))
    headers = log.batch_headers()
    assert [(h.base_offset, h.records_count, h.producer_id) for h in headers if h.producer_id == 5] == [(0, 0, 5)]
    log.close()


def test_compact_delete_logs_obey_retention_too(tmp_path: Path, clock: Clock) -> None:
    log = compacted(tmp_path, clock, **{"cleanup.policy": "compact,delete", "retention.ms": "10000"})
    for round_ in range(6):
        append(log, [(f"k{round_}".encode(), b"x" * 100)], timestamp=T0)
    log.update_high_watermark(log.log_end_offset)
    clock.ms += 20_000
    append(log, [(b"new", b"y")], timestamp=clock.ms)
    log.update_high_watermark(log.log_end_offset)
    cleaner_for(log, clock).clean_once()
    assert [r.key for r in records_of(log)] == [b"new"]
    log.close()


def test_a_truncation_during_cleaning_voids_the_swap(tmp_path: Path, clock: Clock) -> None:
    log = compacted(tmp_path, clock)
    for round_ in range(10):
        append(log, [(b"k", f"v{round_}".encode() * 30)])
    cleaner = cleaner_for(log, clock)
    chosen = cleaner.grab_filthiest_compacted_log()
    assert chosen is not None
    log.truncate_to(log.log_end_offset - 1)
    before = records_of(log)
    entry, cleanable = chosen
    cleaner._clean_log(cleaner._cleaners[0], entry, cleanable)
    cleaner.manager.done(cleanable.topic_partition)
    assert records_of(log) == before and leftovers(log.directory) == []
    assert not (tmp_path / CLEANER_OFFSET_CHECKPOINT).exists()
    log.close()


def test_appends_and_reads_go_on_while_the_cleaner_swaps(tmp_path: Path, clock: Clock) -> None:
    import threading

    log = compacted(tmp_path, clock)
    cleaner = cleaner_for(log, clock)
    appended: dict[bytes | None, bytes | None] = {}
    done = threading.Event()
    failures: list[BaseException] = []

    def appender() -> None:
        try:
            for n in range(300):
                key, value = f"k{n % 7}".encode(), f"{n}".encode() * 10
                append(log, [(key, value)])
                appended[key] = value
                if n % 50 == 0:
                    records_of(log)  # a reader meanwhile
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            failures.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=appender)
    thread.start()
    rounds = 0
    while not done.is_set():
        rounds += cleaner.clean_once()
    thread.join()
    assert failures == [] and rounds > 0
    clean_until_idle(cleaner)
    after = records_of(log)
    assert {key: value for key, (_, value) in latest(after).items()} == appended
    offsets = [r.offset for r in after]
    assert offsets == sorted(set(offsets)) and offsets[-1] == 299
    log.close()
    reopened = compacted(tmp_path, clock)
    assert [r.offset for r in records_of(reopened)] == offsets
    reopened.close()


@pytest.mark.parametrize("crash_at", ["cleaned", "swap", "deleted"])
def test_a_crash_between_the_swap_steps_recovers(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch, crash_at: str
) -> None:
    log = compacted(tmp_path, clock)
    for round_ in range(10):
        append(log, [(f"k{round_ % 3}".encode(), f"v{round_}".encode() * 20)])
    before = latest(records_of(log))
    real_change, real_delete = segment_swap.change_suffixes, segment_swap.delete_segment_files

    def change(directory: Path, base: int, old: str, new: str) -> None:
        if crash_at == "cleaned" or (crash_at == "swap" and new == ".deleted"):
            raise OSError("crash")
        real_change(directory, base, old, new)

    def delete(directory: Path, base: int, extra: str = "") -> None:
        if crash_at == "deleted" and extra == ".deleted":
            raise OSError("crash")
        real_delete(directory, base, extra)

    monkeypatch.setattr(log_module, "change_suffixes", change)
    monkeypatch.setattr(log_module, "delete_segment_files", delete)
    cleaner_for(log, clock).clean_once()
    assert log.offline or crash_at == "cleaned"
    monkeypatch.undo()
    if crash_at == "cleaned":
        # as if the process died while writing: the .cleaned files stay behind
        (log.directory / "00000000000000000000.log.cleaned").write_bytes(b"garbage")
    assert any(name.endswith(".swap") for name in leftovers(log.directory)) == (crash_at != "cleaned")
    for segment in log._segments:
        segment.close_handles()
    reopened = compacted(tmp_path, clock)
    assert leftovers(reopened.directory) == []
    records = records_of(reopened)
    assert latest(records) == before
    offsets = [r.offset for r in records]
    assert offsets == sorted(set(offsets))
    reopened.close()


# --- properties ------------------------------------------------------------------------------------------

KEYS = st.sampled_from([b"a", b"b", b"c", b"d", b"e"])
VALUES = st.one_of(st.none(), st.binary(min_size=1, max_size=60))
BATCHES = st.lists(st.lists(st.tuples(KEYS, VALUES), min_size=1, max_size=4), min_size=1, max_size=30)


def _directories(root: Path) -> Iterator[Path]:
    n = 0
    while True:
        n += 1
        directory = root / f"case-{n}"
        directory.mkdir()
        yield directory


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=BATCHES, map_entries=st.sampled_from([2, 3, 1000]))
def test_cleaning_preserves_the_last_value_of_every_key(
    tmp_path: Path, batches: list[list[Pair]], map_entries: int
) -> None:
    directory = next(_DIRS.setdefault(tmp_path, _directories(tmp_path)))
    clock = Clock()
    log = compacted(directory, clock, **{"segment.bytes": "300", "delete.retention.ms": "100000"})
    try:
        for pairs in batches:
            append(log, pairs)
        before = records_of(log)
        # a small map cleans in several rounds, each up to the last offset it mapped
        cleaner = LogCleaner(
            CleanerConfig(dedupe_buffer_size=24 * map_entries * 2, dedupe_buffer_load_factor=0.5),
            lambda: {(log.topic, log.partition): log},
            clock=clock,
        )
        clean_until_idle(cleaner)
        after = records_of(log)
        assert latest(after) == latest(before)  # the same last value per key, at the same offset
        by_offset = {r.offset: r for r in before}
        for record in after:
            assert by_offset[record.offset] == record  # nothing invented, offsets kept
        if map_entries == 1000:
            active = log.active_segment_base_offset
            cleaned_keys = [r.key for r in after if r.offset < active]
            assert len(cleaned_keys) == len(set(cleaned_keys))
    finally:
        log.close()


_DIRS: dict[Path, Iterator[Path]] = {}


# --- the LogManager's cleaner ----------------------------------------------------------------------------


def test_the_log_managers_cleaner_thread_compacts_and_forgets_deleted_logs(tmp_path: Path) -> None:
    from kafkaops.cluster.local.waiting import wait_for
    from kafkaops.cluster.log import LogManager

    manager = LogManager(
        [tmp_path / "d"],
        topic_configs={"c": {"cleanup.policy": "compact", "segment.bytes": "300", "min.cleanable.dirty.ratio": "0"}},
        cleaner_config=CleanerConfig(backoff_ms=20),
    )
    manager.startup()
    assert manager.cleaner is not None
    threads = list(manager.cleaner._threads)
    assert [t.name for t in threads] == ["kafka-log-cleaner-thread-0"]
    try:
        compact, plain = manager.get_or_create_log("c", 0), manager.get_or_create_log("p", 0)
        for round_ in range(10):
            append(compact, [(b"k", f"{round_}".encode() * 40)])
            append(plain, [(b"k", f"{round_}".encode() * 40)])
        checkpoint = tmp_path / "d" / CLEANER_OFFSET_CHECKPOINT

        def compacted() -> bool:
            active = compact.active_segment_base_offset
            keys = [r.key for r in records_of(compact) if r.offset < active]
            # the checkpoint is written once the whole dirty section is clean, after the swaps
            return keys == [b"k"] and checkpoint.exists() and f"c 0 {active}" in checkpoint.read_text()

        wait_for(compacted, 20, 0.02, what="the compaction of c-0")
        assert len(records_of(plain)) == 10  # delete-only logs are not compacted
        manager.delete_log("c", 0)
        assert "c 0 " not in checkpoint.read_text()
    finally:
        manager.shutdown()
    assert not any(thread.is_alive() for thread in threads)


def test_deleting_many_logs_rewrites_the_cleaner_checkpoint_once_per_dir(tmp_path: Path) -> None:
    """Kafka 2.8's batched asyncDelete: a StopReplica deleting thousands of partitions rewrites the
    checkpoint (temp file, fsync, rename) once, not once per partition."""
    from kafkaops.cluster.log import LogManager

    manager = LogManager(
        [tmp_path / "d"], topic_configs={"c": {"cleanup.policy": "compact"}}, cleaner_config=CleanerConfig()
    )
    manager.startup()
    try:
        assert manager.cleaner is not None
        for partition in range(3):
            manager.get_or_create_log("c", partition)
        checkpoint = tmp_path / "d" / CLEANER_OFFSET_CHECKPOINT
        checkpoint.write_text("0\n3\nc 0 5\nc 1 6\nc 2 7\n")
        rewrites = []
        update = manager.cleaner.manager.update_checkpoints

        def counted(*args: object, **kwargs: object) -> None:
            rewrites.append(args[0])
            update(*args, **kwargs)  # type: ignore[arg-type]

        manager.cleaner.manager.update_checkpoints = counted  # type: ignore[method-assign]
        manager.delete_logs([("c", 0), ("c", 1)])
        assert rewrites == [tmp_path / "d"]
        assert checkpoint.read_text() == "0\n1\nc 2 7\n"
    finally:
        manager.shutdown()

"""Moving a replica between log dirs at the log layer (KIP-113): future log dir names, the preferred dir of a
partition not created yet, the future log's creation, the swap with the current log, what a restart finds
after a completed or interrupted move, and the log start offset checkpoint a DeleteRecords writes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kafkaops.cluster.common.errors import LogDirNotFoundError, LogError, OffsetOutOfRangeError
from kafkaops.cluster.log import LogConfig, LogManager
from kafkaops.cluster.log.checkpoints import LOG_START_OFFSET_CHECKPOINT, parse_offsets
from kafkaops.cluster.log.log import future_log_dir_name, parse_future_log_dir_name, parse_log_dir_name
from kafkaops.cluster.protocol.records import Record, build_batch

T0 = 1_700_000_000_000


def batch(records: int = 1) -> bytes:
    return build_batch([Record(i, T0, None, b"v" * 10) for i in range(records)])


@pytest.fixture
def dirs(tmp_path: Path) -> list[Path]:
    return [tmp_path / "d1", tmp_path / "d2"]


def started(dirs: list[Path]) -> LogManager:
    manager = LogManager(dirs)
    manager.startup()
    return manager


def test_future_dir_names() -> None:
    name = future_log_dir_name("my-topic", 3)
    assert name.startswith("my-topic-3.") and name.endswith("-future")
    assert len(name) == len("my-topic-3.") + 32 + len("-future")
    assert parse_future_log_dir_name(name) == ("my-topic", 3)
    assert parse_log_dir_name(name) is None
    assert parse_future_log_dir_name("my-topic-3") is None
    assert parse_future_log_dir_name("my-topic-3.abc-delete") is None
    assert parse_future_log_dir_name("my-topic-x.abc-future") is None


def test_log_dir_lookup(dirs: list[Path]) -> None:
    manager = started(dirs)
    assert manager.log_dir(str(dirs[1])) == dirs[1]
    assert manager.log_dir(str(dirs[1]) + "/") == dirs[1]
    assert manager.is_log_dir_online(str(dirs[0]))
    with pytest.raises(LogDirNotFoundError, match="Log dir /nowhere is not found in the config."):
        manager.is_log_dir_online("/nowhere")
    manager.shutdown()


def test_a_preferred_dir_places_the_log_when_it_is_created(dirs: list[Path]) -> None:
    manager = started(dirs)
    manager.maybe_update_preferred_log_dir("t", 0, dirs[1])
    assert manager.get_or_create_log("t", 0).parent_dir == dirs[1]
    # used once: the next log goes where the fewest are
    assert manager.get_or_create_log("t", 1).parent_dir == dirs[0]
    # a preferred dir where the log already is: nothing remembered
    manager.maybe_update_preferred_log_dir("t", 0, dirs[1])
    with pytest.raises(LogError, match="without a current log and a preferred log directory"):
        manager.get_or_create_future_log("t", 0)
    manager.shutdown()


def test_the_future_log_replaces_the_current_one(dirs: list[Path]) -> None:
    manager = started(dirs)
    current = manager.get_or_create_log("t", 0)
    assert current.parent_dir == dirs[0]
    for epoch in (0, 0, 1):
        current.append_as_leader(batch(3), epoch)
    current.update_high_watermark(9)
    manager.maybe_update_preferred_log_dir("t", 0, dirs[1])
    future = manager.get_or_create_future_log("t", 0)
    assert future.is_future and not current.is_future
    assert future.parent_dir == dirs[1] and future.directory.name.endswith("-future")
    assert manager.get_or_create_future_log("t", 0) is future
    assert manager.future_logs == {("t", 0): future}
    assert [e.name for e in manager.logs_by_dir()[dirs[1]]] == ["t-0"]

    future.append_as_follower(current.read(0, 1 << 20).records)
    assert future.log_end_offset == current.log_end_offset == 9
    doomed = manager.replace_current_with_future_log("t", 0)
    assert doomed.name.startswith("t-0.") and doomed.name.endswith("-delete") and doomed.parent == dirs[0]
    assert manager.get_log("t", 0) is future and not future.is_future
    assert future.directory == dirs[1] / "t-0" and future.high_watermark == 9
    assert manager.get_future_log("t", 0) is None
    # the renamed log still reads and appends in its new place, epochs included
    future.append_as_leader(batch(1), 2)
    assert [(e.epoch, e.start_offset) for e in future.epoch_entries] == [(0, 0), (1, 6), (2, 9)]
    assert (dirs[1] / "t-0" / "leader-epoch-checkpoint").read_text().splitlines()[-1] == "2 9"
    manager.shutdown()

    again = started(dirs)
    assert doomed.exists() is False  # an interrupted deletion is finished at startup
    moved = again.get_log("t", 0)
    assert moved is not None and moved.parent_dir == dirs[1] and moved.log_end_offset == 10
    assert not (dirs[0] / "t-0").exists()
    again.shutdown()


def test_a_future_log_survives_a_restart_and_an_orphan_is_promoted(dirs: list[Path]) -> None:
    manager = started(dirs)
    current = manager.get_or_create_log("t", 0)
    current.append_as_leader(batch(2), 0)
    manager.get_or_create_log("u", 0)  # in d2
    manager.maybe_update_preferred_log_dir("t", 0, dirs[1])
    manager.get_or_create_future_log("t", 0).append_as_follower(current.read(0, 1 << 20).records)
    manager.maybe_update_preferred_log_dir("u", 0, dirs[0])
    manager.get_or_create_future_log("u", 0)
    manager.shutdown()

    again = started(dirs)
    future = again.get_future_log("t", 0)
    assert future is not None and future.log_end_offset == 2 and future.parent_dir == dirs[1]
    again.remove_future_log("u", 0)
    assert again.get_future_log("u", 0) is None and not list(dirs[0].glob("u-0.*"))
    # a crash after the current dir was renamed away, before the future dir took its name
    t0 = again.get_log("t", 0)
    assert t0 is not None
    t0.rename_dir("t-0.0123456789abcdef0123456789abcdef-delete")
    again.shutdown()

    last = started(dirs)
    promoted = last.get_log("t", 0)
    assert promoted is not None and promoted.directory == dirs[1] / "t-0" and promoted.log_end_offset == 2
    assert last.future_logs == {}
    last.shutdown()


def test_deleting_a_partition_deletes_its_future_log(dirs: list[Path]) -> None:
    manager = started(dirs)
    manager.get_or_create_log("t", 0)
    manager.maybe_update_preferred_log_dir("t", 0, dirs[1])
    future = manager.get_or_create_future_log("t", 0)
    assert manager.delete_log("t", 0)
    assert not future.directory.exists() and manager.future_logs == {}
    manager.shutdown()


def test_the_log_start_offset_checkpoint_is_written_on_demand(dirs: list[Path]) -> None:
    now = int(time.time() * 1000)
    one_batch_per_segment = LogConfig.from_mapping({"segment.bytes": "200"})
    manager = LogManager(dirs[:1], default_config=one_batch_per_segment)
    manager.startup()
    log = manager.get_or_create_log("t", 0)
    for _ in range(3):
        log.append_as_leader(build_batch([Record(i, now, None, b"v" * 10) for i in range(4)]), 0)
    log.update_high_watermark(12)
    assert log.segment_base_offsets == [0, 4, 8]
    assert log.maybe_increment_log_start_offset(6)
    manager.checkpoint_log_start_offsets(dirs[0])
    path = dirs[0] / LOG_START_OFFSET_CHECKPOINT
    assert parse_offsets(path.read_text(), str(path)) == {("t", 0): 6}
    assert log.delete_old_segments() == 1  # the segment wholly below the log start offset
    assert log.segment_base_offsets == [4, 8] and log.log_start_offset == 6
    with pytest.raises(OffsetOutOfRangeError):
        log.read(5, 1000)
    manager.shutdown()
    again = LogManager(dirs[:1], default_config=one_batch_per_segment)
    again.startup()
    reloaded = again.get_log("t", 0)
    assert reloaded is not None and reloaded.log_start_offset == 6
    again.shutdown()

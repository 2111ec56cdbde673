"""LogManager: loading log dirs, placement, the checkpoint files it owns, clean and unclean restarts (a
real SIGKILL of a writing process), the dir lock, live topic configs, retention, and dir failures."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kafkaops.cluster.common.errors import InvalidConfigurationError, LogDirFailureError, LogDirLockedError
from kafkaops.cluster.log import LogConfig, LogManager
from kafkaops.cluster.protocol.records import Record, build_batch, iter_batches

T0 = 1_700_000_000_000


def batch(records: int = 1) -> bytes:
    return build_batch([Record(i, T0, None, b"v" * 10) for i in range(records)])


@pytest.fixture
def dirs(tmp_path: Path) -> list[Path]:
    return [tmp_path / "d1", tmp_path / "d2"]


def started(dirs: list[Path], **kwargs: object) -> LogManager:
    manager = LogManager(dirs, **kwargs)  # type: ignore[arg-type]
    manager.startup()
    return manager


def test_startup_creates_and_locks_the_dirs(dirs: list[Path]) -> None:
    manager = started(dirs)
    assert all((d / ".lock").exists() for d in dirs)
    with pytest.raises(LogDirLockedError, match="Failed to acquire lock on file .lock in"):
        LogManager(dirs).startup()
    manager.shutdown()
    LogManager(dirs).startup()  # released


def test_new_logs_go_to_the_dir_with_fewest_logs(dirs: list[Path]) -> None:
    manager = started(dirs)
    placed = [manager.get_or_create_log("t", p).directory.parent for p in range(5)]
    assert placed == [dirs[0], dirs[1], dirs[0], dirs[1], dirs[0]]
    assert manager.get_or_create_log("t", 0) is manager.get_log("t", 0)
    assert manager.get_log("t", 9) is None
    assert sorted(manager.logs) == [("t", p) for p in range(5)]
    manager.shutdown()


def test_checkpoint_files(dirs: list[Path]) -> None:
    manager = started(dirs[:1])
    orders = manager.get_or_create_log("orders", 0)
    audit = manager.get_or_create_log("audit", 3)
    for _ in range(3):
        orders.append_as_leader(batch(2), 0)
    audit.append_as_leader(batch(), 0)
    orders.update_high_watermark(4)
    audit.update_high_watermark(1)
    manager.checkpoint_high_watermarks()
    assert (dirs[0] / "replication-offset-checkpoint").read_text() == "0\n2\naudit 3 1\norders 0 4\n"
    manager.flush_logs()  # nothing rolled: recovery points stay where loading put them
    manager.checkpoint_recovery_points()
    assert (dirs[0] / "recovery-point-offset-checkpoint").read_text() == "0\n2\naudit 3 0\norders 0 0\n"
    assert (dirs[0] / "log-start-offset-checkpoint").read_text() == "0\n0\n"
    orders.flush()
    orders.maybe_increment_log_start_offset(3)
    manager.checkpoint_recovery_points()
    assert (dirs[0] / "recovery-point-offset-checkpoint").read_text() == "0\n2\naudit 3 0\norders 0 6\n"
    assert (dirs[0] / "log-start-offset-checkpoint").read_text() == "0\n1\norders 0 3\n"
    manager.shutdown()


def test_an_unchanged_checkpoint_is_not_written_again(dirs: list[Path]) -> None:
    manager = started(dirs[:1])
    orders = manager.get_or_create_log("orders", 0)
    orders.append_as_leader(batch(2), 0)
    orders.update_high_watermark(1)
    checkpoint = dirs[0] / "replication-offset-checkpoint"
    manager.checkpoint_high_watermarks()
    written = checkpoint.stat().st_ino  # each write is a new file renamed into place
    manager.checkpoint_high_watermarks()
    assert checkpoint.stat().st_ino == written
    orders.update_high_watermark(2)
    manager.checkpoint_high_watermarks()
    assert checkpoint.stat().st_ino != written
    assert checkpoint.read_text() == "0\n1\norders 0 2\n"
    manager.shutdown()


def test_flush_logs_moves_recovery_points_to_the_rolled_segments(dirs: list[Path]) -> None:
    manager = started(dirs[:1], default_config=LogConfig(segment_bytes=2 * len(batch())))
    log = manager.get_or_create_log("t", 0)
    for _ in range(5):
        log.append_as_leader(batch(), 0)
    assert log.segment_base_offsets == [0, 2, 4]
    manager.flush_logs()
    assert log.recovery_point == 4
    manager.shutdown()


def test_a_clean_restart(dirs: list[Path]) -> None:
    manager = started(dirs)
    for partition in range(3):
        log = manager.get_or_create_log("t", partition)
        for _ in range(partition + 1):
            log.append_as_leader(batch(), 2)
        log.update_high_watermark(partition)
    manager.shutdown()
    assert all((d / ".kafka_cleanshutdown").exists() for d in dirs)
    restarted = started(dirs)
    assert not any((d / ".kafka_cleanshutdown").exists() for d in dirs)
    state = {key: (log.log_end_offset, log.high_watermark, log.recovery_point) for key, log in restarted.logs.items()}
    assert state == {("t", 0): (1, 0, 1), ("t", 1): (2, 1, 2), ("t", 2): (3, 2, 3)}
    restarted.shutdown()


def test_shutdown_checkpoints_each_dir_and_the_restart_recovers_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # relative dirs, as a broker.yaml may name them: shutdown groups the logs by their dirs' paths
    monkeypatch.chdir(tmp_path)
    dirs = [Path("d1"), Path("d2")]
    manager = started(dirs)
    for partition in range(40):  # most of them empty, as a broker's thousands of idle replicas
        manager.get_or_create_log("idle", partition)
    written = [manager.get_or_create_log("t", partition) for partition in range(4)]
    for log in written:
        for _ in range(3):
            log.append_as_leader(batch(), 1)
        log.update_high_watermark(2)
    written[1].maybe_increment_log_start_offset(1)
    future = written[0].parent_dir
    manager.maybe_update_preferred_log_dir("t", 0, dirs[1] if future == dirs[0] else dirs[0])
    manager.get_or_create_future_log("t", 0).append_as_follower(batch(2))
    manager.shutdown()

    by_dir = {d: {(log.topic, log.partition) for log in manager.logs.values() if log.parent_dir == d} for d in dirs}
    moving = next(d for d in dirs if d != future)
    for d in dirs:
        assert (d / ".kafka_cleanshutdown").exists()
        current = sorted(by_dir[d])
        high_watermarks = {(t, p): 2 if t == "t" else 0 for t, p in current}
        recovery_points = {(t, p): 3 if t == "t" else 0 for t, p in current}
        if d == moving:  # the future log is checkpointed in its own dir, beside the current logs there
            high_watermarks[("t", 0)], recovery_points[("t", 0)] = 0, 2
        expected = [f"{t} {p} {o}" for (t, p), o in sorted(high_watermarks.items())]
        assert (d / "replication-offset-checkpoint").read_text() == "0\n" + "".join(
            f"{line}\n" for line in [str(len(expected)), *expected]
        )
        expected = [f"{t} {p} {o}" for (t, p), o in sorted(recovery_points.items())]
        assert (d / "recovery-point-offset-checkpoint").read_text() == "0\n" + "".join(
            f"{line}\n" for line in [str(len(expected)), *expected]
        )
        starts = "0\n1\nt 1 1\n" if ("t", 1) in by_dir[d] else "0\n0\n"
        assert (d / "log-start-offset-checkpoint").read_text() == starts

    def no_recovery(*_: object, **__: object) -> int:
        raise AssertionError("a clean shutdown must leave nothing to recover")

    monkeypatch.setattr("kafkaops.cluster.log.segment.LogSegment.recover", no_recovery)
    restarted = started(dirs)
    state = {key: (log.log_start_offset, log.log_end_offset, log.high_watermark) for key, log in restarted.logs.items()}
    assert state == {
        **{("idle", p): (0, 0, 0) for p in range(40)},
        **{("t", p): (1 if p == 1 else 0, 3, 2) for p in range(4)},
    }
    moved = restarted.get_future_log("t", 0)
    assert moved is not None and moved.log_end_offset == 2
    restarted.shutdown()


_WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from kafkaops.cluster.log import LogConfig, LogManager
    from kafkaops.cluster.protocol.records import Record, build_batch

    manager = LogManager([sys.argv[1]], default_config=LogConfig(segment_bytes=4000))
    manager.startup()
    log = manager.get_or_create_log("orders", 0)
    for i in range(100):
        log.append_as_leader(build_batch([Record(0, 1_700_000_000_000, None, b"v" * 100)]), 1)
        if i == 49:
            manager.flush_logs()
            manager.checkpoint_recovery_points()
    log.update_high_watermark(90)
    manager.checkpoint_high_watermarks()
    # half a batch more, as a kill in the middle of a write leaves it
    segment = sorted(p for p in log.directory.iterdir() if p.suffix == ".log")[-1]
    with open(segment, "ab") as file:
        file.write(build_batch([Record(0, 1, None, b"w" * 100)])[:50])
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def test_recovery_after_sigkill(tmp_path: Path) -> None:
    directory = tmp_path / "d"
    result = subprocess.run([sys.executable, "-c", _WRITER, str(directory)], capture_output=True, check=False)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()
    assert not (directory / ".kafka_cleanshutdown").exists()
    manager = started([directory])  # the killed process's flock died with it
    log = manager.get_log("orders", 0)
    assert log is not None
    assert (log.log_end_offset, log.high_watermark) == (100, 90)
    offsets: list[int] = []
    while len(offsets) < 100:  # a read returns one segment's batches
        chunk = log.read(len(offsets), 1 << 30).records
        assert chunk
        offsets += [b.header.base_offset for b in iter_batches(chunk)]
    assert offsets == list(range(100))
    assert log.append_as_leader(batch(), 2).first_offset == 100
    manager.shutdown()


def test_unreadable_checkpoints_are_not_fatal(dirs: list[Path]) -> None:
    manager = started(dirs[:1])
    log = manager.get_or_create_log("t", 0)
    log.append_as_leader(batch(5), 0)
    log.update_high_watermark(5)
    manager.shutdown()
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint", "log-start-offset-checkpoint"):
        (dirs[0] / name).write_text("7\n")
    restarted = started(dirs[:1])
    log = restarted.get_log("t", 0)
    assert log is not None
    assert (log.log_end_offset, log.high_watermark) == (5, 0)  # the HW rises again as the ISR confirms
    restarted.shutdown()


def test_startup_skips_what_is_not_a_partition_and_finishes_deletions(dirs: list[Path]) -> None:
    dirs[0].mkdir(parents=True)
    (dirs[0] / "lost+found").mkdir()
    (dirs[0] / "t-0.0123abcd-delete").mkdir()
    (dirs[0] / "t-0.0123abcd-delete" / "00000000000000000000.log").write_bytes(b"")
    (dirs[0] / "meta.properties").write_text("broker.id=1\n")
    manager = started(dirs[:1])
    assert manager.logs == {}
    assert sorted(p.name for p in dirs[0].iterdir()) == [".lock", "lost+found", "meta.properties"]
    manager.shutdown()


def test_delete_log(dirs: list[Path]) -> None:
    manager = started(dirs[:1])
    manager.get_or_create_log("t", 0).append_as_leader(batch(), 0)
    manager.get_or_create_log("t", 1)
    manager.checkpoint_high_watermarks()
    assert manager.delete_log("t", 0)
    assert not manager.delete_log("t", 0)
    assert not (dirs[0] / "t-0").exists()
    assert (dirs[0] / "replication-offset-checkpoint").read_text() == "0\n1\nt 1 0\n"
    assert (dirs[0] / "recovery-point-offset-checkpoint").read_text() == "0\n1\nt 1 0\n"
    manager.shutdown()


def test_deleting_many_logs_makes_their_renames_durable_once_per_dir(
    dirs: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from kafkaops.cluster.log import log as log_module
    from kafkaops.cluster.log import manager as manager_module

    manager = started(dirs[:2])
    for partition in range(6):
        manager.get_or_create_log("t", partition)
    synced: list[Path] = []
    fsync = manager_module.fsync_path
    for module in (manager_module, log_module):
        monkeypatch.setattr(module, "fsync_path", lambda path: (synced.append(Path(path)), fsync(path))[1])
    outcome = manager.delete_logs([("t", p) for p in range(6)])
    assert outcome == {("t", p): None for p in range(6)}
    # one fsync of each dir after every rename, before the renamed directories are removed (the
    # checkpoints rewritten after them are fsynced too: only the dirs themselves are counted here)
    assert sorted(p for p in synced if p in dirs) == sorted(dirs[:2])
    for directory in dirs[:2]:
        assert not [child for child in directory.iterdir() if child.is_dir()]
    manager.shutdown()


def test_topic_configs_apply_at_creation_and_live(dirs: list[Path]) -> None:
    size = len(batch())
    manager = started(
        dirs[:1],
        default_config=LogConfig(segment_bytes=10 * size),
        topic_configs={"small": {"segment.bytes": str(size)}},
    )
    small, big = manager.get_or_create_log("small", 0), manager.get_or_create_log("big", 0)
    assert (small.config.segment_bytes, big.config.segment_bytes) == (size, 10 * size)
    with pytest.raises(InvalidConfigurationError, match="segment.bytes"):
        manager.set_topic_config("big", {"segment.bytes": "1"})
    assert big.config.segment_bytes == 10 * size
    manager.set_topic_config("big", {"segment.bytes": str(size)})
    big.append_as_leader(batch(), 0)
    big.append_as_leader(batch(), 0)
    assert big.segment_base_offsets == [0, 1]
    manager.set_topic_config("big", {})  # overrides removed: back to the defaults
    assert big.config.segment_bytes == 10 * size
    manager.shutdown()


def test_cleanup_logs_applies_retention(dirs: list[Path]) -> None:
    size = len(batch())
    manager = started(dirs, default_config=LogConfig(segment_bytes=size, retention_bytes=size, retention_ms=-1))
    for partition in range(2):
        log = manager.get_or_create_log("t", partition)
        for _ in range(4):
            log.append_as_leader(batch(), 0)
        log.update_high_watermark(4)
    assert manager.cleanup_logs() == 6  # three of four one-batch segments in each log
    assert [log.log_start_offset for log in manager.logs.values()] == [3, 3]
    manager.shutdown()


def test_an_io_error_takes_the_dir_offline(dirs: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    manager = started(dirs)
    first, second, third = (manager.get_or_create_log("t", p) for p in range(3))
    assert first.directory.parent == third.directory.parent == dirs[0]

    def io_error(*args: object) -> int:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "pwrite", io_error)
    monkeypatch.setattr(os, "pwritev", io_error)  # a leader's appends
    with pytest.raises(LogDirFailureError):
        first.append_as_leader(batch(), 0)
    monkeypatch.undo()
    assert manager.offline_dirs == {dirs[0]}
    with pytest.raises(LogDirFailureError, match="offline"):
        third.read(0, 100)  # its neighbour failed: the whole dir stops
    second.append_as_leader(batch(), 0)  # the other dir carries on
    assert manager.get_or_create_log("t", 3).directory.parent == dirs[1]
    manager.cleanup_logs()
    manager.checkpoint_high_watermarks()
    manager.shutdown()
    assert not (dirs[0] / ".kafka_cleanshutdown").exists()
    assert (dirs[1] / ".kafka_cleanshutdown").exists()


def test_startup_fails_only_when_no_dir_can_be_used(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("")
    manager = started([blocked, tmp_path / "ok"])
    assert manager.offline_dirs == {blocked}
    manager.shutdown()
    with pytest.raises(LogDirFailureError, match="no log directory could be loaded"):
        LogManager([blocked]).startup()


def test_a_dir_that_fails_while_loading_takes_its_loaded_logs_offline(dirs: list[Path]) -> None:
    manager = started(dirs)
    manager.get_or_create_log("a", 0).append_as_leader(batch(), 0)  # in d1
    manager.shutdown()
    (dirs[0] / "b-0" / "00000000000000000000.log").mkdir(parents=True)  # opening it fails (EISDIR)
    restarted = started(dirs)
    assert restarted.offline_dirs == {dirs[0]}
    loaded = restarted.get_log("a", 0)
    assert loaded is not None and loaded.offline
    restarted.shutdown()

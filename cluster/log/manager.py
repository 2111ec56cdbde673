"""A broker's logs across its `log.dirs` (Kafka's `LogManager`, 2.8, without the scheduler).

    <log dir>/
        .lock                               flock'ed while this process uses the dir
        .kafka_cleanshutdown                present only between a clean shutdown and the next start
        replication-offset-checkpoint       high watermarks
        recovery-point-offset-checkpoint    offsets below which each log is fsynced
        log-start-offset-checkpoint         log start offsets above the first segment's base
        cleaner-offset-checkpoint           first dirty offset of each compacted log (log_cleaner_manager.py)
        <topic>-<partition>/                one Log each
        <topic>-<partition>.<id>-delete/    a deletion interrupted by a crash: removed on start
        <topic>-<partition>.<id>-future/    a replica being moved here from another log dir (a future log)

`startup` locks each dir, reads its checkpoints and opens every partition directory in it: without the
clean-shutdown marker, each log recovers from its recovery point. Unreadable checkpoints are not fatal,
as in Kafka: recovery then starts from offset 0, log start offsets from the first segments, and high
watermarks from the log start offsets (they only rise again as the ISR confirms data).

With a `cleaner_config` (Kafka's `log.cleaner.enable`), the manager starts and stops the log cleaner's
threads (log_cleaner.py), which compact the `cleanup.policy=compact` logs and apply their retention;
`cleanup_logs` then leaves those logs to them, as Kafka's LogManager does.

The caller schedules the periodic work, as Kafka's scheduler would: `cleanup_logs` (retention,
`log.retention.check.interval.ms`), `flush_logs` (fsync of rolled segments, which moves recovery points
up), `checkpoint_high_watermarks` (`replica.high.watermark.checkpoint.interval.ms`) and
`checkpoint_recovery_points` (`log.flush.offset.checkpoint.interval.ms`).

Dir failures: an OSError in a dir (from a log or a checkpoint write) takes the whole dir offline: every
log in it refuses further work with LogDirFailureError (KAFKA_STORAGE_ERROR to clients), the periodic
jobs skip it, new logs go elsewhere, and shutdown leaves it without the clean marker so the next start
recovers it. A dir that cannot be opened at start is offline from the start; if every dir is, startup
raises LogDirFailureError. LogDirLockedError when another process holds a dir's lock is always fatal.

Moving a replica between log dirs (KIP-113, AlterReplicaLogDirs): the broker asks for a future log in the
target dir (`get_or_create_future_log`), fills it from the current log, then `replace_current_with_future_log`
renames the current dir to `...-delete` and the future dir to `<topic>-<partition>`: a crash in between
leaves a future log without a current one, which `startup` makes the current log (Kafka 2.8 renames the
future dir first, and a crash then leaves two current dirs, which its startup refuses). A target dir named
before the partition exists here is remembered (`maybe_update_preferred_log_dir`) and used when it is
created.

Thread-safe: a lock guards the map of logs; work on the logs themselves runs outside it, under each
log's own lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from kafkaops.cluster.common.errors import (
    InvalidConfigurationError,
    LogDirFailureError,
    LogDirLockedError,
    LogDirNotFoundError,
    LogError,
    MalformedCheckpointError,
)

from .checkpoints import (
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_OFFSET_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    format_offsets,
    fsync_path,
    parse_offsets,
    read_checkpoint,
    write_checkpoint,
)
from .cleaner_config import CleanerConfig
from .config import LogConfig
from .log import (
    DELETE_DIR_SUFFIX,
    Log,
    delete_log_dir_name,
    future_log_dir_name,
    log_dir_name,
    parse_future_log_dir_name,
    parse_log_dir_name,
    remove_log_dir,
)
from .log_cleaner import LogCleaner

log = logging.getLogger(__name__)

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
LOCK_FILE = ".lock"

TopicPartition = tuple[str, int]


class LogManager:
    """The logs of one broker. `default_config` is the broker's `log.*` settings as topic defaults;
    `topic_configs` maps a topic to its overrides (plain `/config/topics` values). `clock` returns
    seconds, as `time.time`. `on_dir_offline` hears of each dir that goes offline (the broker reports it
    to the controller). Nothing is read before `startup`."""

    def __init__(
        self,
        log_dirs: Sequence[str | os.PathLike[str]],
        *,
        default_config: LogConfig | None = None,
        topic_configs: Mapping[str, Mapping[str, object]] | None = None,
        clock: Callable[[], float] = time.time,
        on_dir_offline: Callable[[Path], None] | None = None,
        cleaner_config: CleanerConfig | None = None,
    ) -> None:
        if not log_dirs:
            raise ValueError("At least one log directory must be given")
        self.log_dirs = [Path(directory) for directory in log_dirs]
        self.default_config = default_config if default_config is not None else LogConfig()
        self._topic_overrides = {topic: dict(overrides) for topic, overrides in (topic_configs or {}).items()}
        self._topic_configs = {
            topic: LogConfig.from_mapping(overrides, self.default_config)
            for topic, overrides in self._topic_overrides.items()
        }
        self._clock = clock
        self._on_dir_offline = on_dir_offline
        self._lock = threading.Lock()
        # Checkpoints are written from the periodic tasks' threads and by deletions on the broker's loop,
        # all through the same `<file>.tmp`: one writer at a time, or a rename finds its temp file gone.
        self._checkpoint_lock = threading.Lock()
        self._checkpointed: dict[Path, dict[TopicPartition, int]] = {}
        """What each checkpoint file (by path) holds as this manager last wrote it: an unchanged one is not
        written again (the high watermarks every 5 s, of thousands of idle partitions, were most of an idle
        follower's own work besides fetching)."""
        self._logs: dict[TopicPartition, Log] = {}
        self._future_logs: dict[TopicPartition, Log] = {}
        self._preferred_dirs: dict[TopicPartition, Path] = {}
        self._offline: set[Path] = set()
        self._dir_locks: dict[Path, int] = {}
        # Kafka's `log.cleaner.enable`: compacted logs are cleaned, and their retention applied, by the
        # cleaner's threads (started with the manager); without it they only obey retention.
        self.cleaner: LogCleaner | None = None
        if cleaner_config is not None and cleaner_config.enable_cleaner:
            self.cleaner = LogCleaner(
                cleaner_config, lambda: self.logs, clock=clock, on_dir_failure=self._dir_io_failed
            )

    # --- start and stop ---------------------------------------------------------------------------------

    def startup(self) -> None:
        """Lock and load every log dir (see the module docstring for what fails how)."""
        for directory in self.log_dirs:
            try:
                self._load_dir(directory)
            except (OSError, LogDirFailureError) as exc:
                log.error("Log directory %s is offline: cannot load it: %s", directory, exc)
                failure = exc if isinstance(exc, LogDirFailureError) else LogDirFailureError(str(directory), str(exc))
                self._take_offline(directory, failure)  # with any logs it loaded before failing
        if len(self._offline) == len(self.log_dirs):
            raise LogDirFailureError(", ".join(map(str, self.log_dirs)), "no log directory could be loaded")
        # With a dir offline, the current log of a future one may be in it: leave both as they are.
        for tp in [tp for tp in self._future_logs if tp not in self._logs and not self._offline]:
            log.warning("%s has a future log and no current log (a move was interrupted): promoting it", tp)
            self._promote_future_log(tp)
        if self.cleaner is not None:
            self.cleaner.startup()

    def _load_dir(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        lock_fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock_fd)
            raise LogDirLockedError(
                f"Failed to acquire lock on file .lock in {directory}. A Kafka instance in another process or "
                "thread is using this directory."
            ) from None
        self._dir_locks[directory] = lock_fd
        marker = directory / CLEAN_SHUTDOWN_FILE
        clean = marker.exists()
        recovery_points = self._read_offsets(directory, RECOVERY_POINT_OFFSET_CHECKPOINT, "recovery starts at 0")
        log_starts = self._read_offsets(directory, LOG_START_OFFSET_CHECKPOINT, "starting from the first segments")
        high_watermarks = self._read_offsets(directory, REPLICATION_OFFSET_CHECKPOINT, "starting from the log starts")
        for child in sorted(directory.iterdir()):
            if not child.is_dir():
                continue
            if child.name.endswith(DELETE_DIR_SUFFIX):
                log.info("Deleting %s: its deletion was interrupted", child)
                remove_log_dir(child)
                continue
            key = parse_log_dir_name(child.name)
            logs = self._logs
            if key is None:
                key = parse_future_log_dir_name(child.name)
                logs = self._future_logs
            if key is None:
                log.warning("Ignoring %s: not a <topic>-<partition> directory", child)
                continue
            if key in logs:
                raise LogError(f"Duplicate log directories for {child.name}: {logs[key].directory}, {child}")
            logs[key] = Log(
                child,
                self.config_for(key[0]),
                log_start_offset=log_starts.get(key, 0),
                recovery_point=recovery_points.get(key, 0),
                high_watermark=high_watermarks.get(key, 0),
                had_clean_shutdown=clean,
                clock=self._clock,
                on_dir_failure=self._dir_failed,
            )
        # From here on a crash is unclean again.
        marker.unlink(missing_ok=True)
        fsync_path(directory)

    @staticmethod
    def _read_offsets(directory: Path, name: str, fallback: str) -> dict[TopicPartition, int]:
        path = directory / name
        try:
            return parse_offsets(read_checkpoint(path), str(path))
        except MalformedCheckpointError as exc:
            log.warning("Ignoring %s (%s): %s", path, fallback, exc)
            return {}

    def shutdown(self) -> None:
        """Flush and close every log, write the checkpoints, mark each healthy dir cleanly shut down and
        release the dir locks. A dir that fails on the way is left without the marker.

        The logs are grouped by dir once for all these steps: at 10,000 logs, finding each dir's logs again
        for each checkpoint file was about a quarter of the work. A log with nothing to flush or close costs
        no I/O."""
        if self.cleaner is not None:
            self.cleaner.shutdown()
        by_dir = self._group_by_dir(self._all_logs())
        self._checkpoint_high_watermarks(by_dir)
        for directory in self.online_dirs:
            try:
                for entry in by_dir.get(directory, ()):
                    entry.flush()
            except LogDirFailureError:
                continue
        self._checkpoint_recovery_points(by_dir)
        for entry in self._all_logs():
            try:
                entry.close()
            except LogDirFailureError:
                continue
        for directory in self.online_dirs:
            try:
                (directory / CLEAN_SHUTDOWN_FILE).touch()
                fsync_path(directory)
            except OSError as exc:
                self._dir_io_failed(directory, exc)
        for lock_fd in self._dir_locks.values():
            os.close(lock_fd)
        self._dir_locks.clear()

    # --- logs ------------------------------------------------------------------------------------------

    @property
    def logs(self) -> dict[TopicPartition, Log]:
        with self._lock:
            return dict(self._logs)

    @property
    def online_dirs(self) -> list[Path]:
        return [directory for directory in self.log_dirs if directory not in self._offline]

    @property
    def offline_dirs(self) -> frozenset[Path]:
        return frozenset(self._offline)

    def get_log(self, topic: str, partition: int) -> Log | None:
        with self._lock:
            return self._logs.get((topic, partition))

    def get_or_create_log(self, topic: str, partition: int) -> Log:
        """The partition's log, created if there is none: in its preferred dir if AlterReplicaLogDirs named
        one, else in the online dir holding the fewest logs (Kafka's `nextLogDirs`). Raises
        LogDirFailureError when no dir is online (or the preferred one is not) or the new log cannot be made."""
        with self._lock:
            existing = self._logs.get((topic, partition))
            if existing is not None:
                return existing
            preferred = self._preferred_dirs.get((topic, partition))
            if preferred is not None:
                created = self._create_log(preferred, log_dir_name(topic, partition), topic)
                self._logs[(topic, partition)] = created
                del self._preferred_dirs[(topic, partition)]  # satisfied
                return created
            online = self.online_dirs
            if not online:
                raise LogDirFailureError(", ".join(map(str, self.log_dirs)), "no log directory is online")
            if len(online) == 1:
                directory = online[0]  # no counting: thousands of new replicas at once must not be O(n²)
            else:
                counts = {directory: 0 for directory in online}
                for entry in self._logs.values():
                    if entry.parent_dir in counts:
                        counts[entry.parent_dir] += 1
                directory = min(online, key=counts.__getitem__)
            created = self._create_log(directory, log_dir_name(topic, partition), topic)
            self._logs[(topic, partition)] = created
            return created

    def _create_log(self, directory: Path, name: str, topic: str) -> Log:
        if directory in self._offline:
            raise LogDirFailureError(str(directory), "the log directory is offline")
        return Log(directory / name, self.config_for(topic), clock=self._clock, on_dir_failure=self._dir_failed)

    # --- moving replicas between log dirs --------------------------------------------------------------

    def log_dir(self, path: str | os.PathLike[str]) -> Path:
        """The configured log dir `path` names (compared as absolute paths, as Kafka's `isLogDirOnline`).
        Raises LogDirNotFoundError if it is not one of `log.dirs`."""
        wanted = os.path.abspath(path)
        for directory in self.log_dirs:
            if os.path.abspath(directory) == wanted:
                return directory
        raise LogDirNotFoundError(f"Log dir {path} is not found in the config.")

    def is_log_dir_online(self, path: str | os.PathLike[str]) -> bool:
        """Raises LogDirNotFoundError if `path` is not one of `log.dirs`."""
        return self.log_dir(path) not in self._offline

    def get_future_log(self, topic: str, partition: int) -> Log | None:
        with self._lock:
            return self._future_logs.get((topic, partition))

    @property
    def future_logs(self) -> dict[TopicPartition, Log]:
        with self._lock:
            return dict(self._future_logs)

    def maybe_update_preferred_log_dir(self, topic: str, partition: int, directory: Path) -> None:
        """Remember `directory` for the partition's log (Kafka's `maybeUpdatePreferredLogDir`), unless its
        current or future log is there already."""
        tp = (topic, partition)
        with self._lock:
            current, future = self._logs.get(tp), self._future_logs.get(tp)
            if not any(entry is not None and entry.parent_dir == directory for entry in (current, future)):
                self._preferred_dirs[tp] = directory

    def get_or_create_future_log(self, topic: str, partition: int) -> Log:
        """The partition's future log, created in its preferred dir if there is none (Kafka's
        `getOrCreateLog(isFuture = true)`). Raises LogError without a current log or a preferred dir other
        than the current log's, LogDirFailureError if that dir is offline."""
        tp = (topic, partition)
        with self._lock:
            existing = self._future_logs.get(tp)
            if existing is not None:
                return existing
            current, preferred = self._logs.get(tp), self._preferred_dirs.get(tp)
            if current is None or preferred is None:
                raise LogError(
                    f"Can not create the future log for {topic}-{partition} without a current log and a "
                    "preferred log directory"
                )
            if current.parent_dir == preferred:
                raise LogError(
                    f"Can not create the future log for {topic}-{partition} in the current log directory of "
                    "this partition"
                )
            created = self._create_log(preferred, future_log_dir_name(topic, partition), topic)
            self._future_logs[tp] = created
            del self._preferred_dirs[tp]
            return created

    def remove_future_log(self, topic: str, partition: int, *, delete: bool = True) -> bool:
        """Delete the partition's future log (a move abandoned or redirected), or only forget it (its dir
        failed: it is left for the next start to find); False if there was none. Raises LogDirFailureError
        if its dir failed while deleting."""
        with self._lock:
            doomed = self._future_logs.pop((topic, partition), None)
        if doomed is None:
            return False
        if not delete:
            return True
        doomed.delete()
        self._write_recovery_checkpoints(doomed.parent_dir)
        return True

    def replace_current_with_future_log(self, topic: str, partition: int) -> Path:
        """The future log becomes the partition's log (Kafka's `replaceCurrentWithFutureLog`): the current
        log's dir is renamed `...-delete` and closed, the future dir renamed `<topic>-<partition>`, and both
        dirs' checkpoints rewritten. Returns the renamed old dir, for the caller to delete (off the
        broker's loop: it may be large). The caller holds off appends to both logs meanwhile. Raises
        LogError without both logs, LogDirFailureError if either dir fails."""
        tp = (topic, partition)
        with self._lock:
            source, destination = self._logs.get(tp), self._future_logs.get(tp)
            if source is None or destination is None:
                raise LogError(f"{topic}-{partition} has no current and future log to swap")
            doomed = source.rename_dir(delete_log_dir_name(topic, partition))
            source.close()
            del self._logs[tp]
            self._promote_future_log(tp)
        destination.update_high_watermark(source.high_watermark)
        for directory in (source.parent_dir, destination.parent_dir):
            if directory not in self._offline:
                self._write_offsets(directory, REPLICATION_OFFSET_CHECKPOINT, _high_watermark)
                self._write_recovery_checkpoints(directory)
        log.info("The current replica is successfully replaced with the future replica for %s-%s", topic, partition)
        return doomed

    def _promote_future_log(self, tp: TopicPartition) -> None:
        """Called under the lock (or at startup)."""
        future = self._future_logs.pop(tp)
        future.rename_dir(log_dir_name(*tp))
        self._logs[tp] = future

    def checkpoint_log_start_offsets(self, directory: Path) -> None:
        """Write one dir's `log-start-offset-checkpoint` (and recovery points) now: a DeleteRecords must
        survive a crash, not only a clean shutdown."""
        if directory not in self._offline:
            self._write_recovery_checkpoints(directory)

    def logs_by_dir(self) -> dict[Path, list[Log]]:
        """Every configured dir and its current and future logs (for DescribeLogDirs)."""
        grouped: dict[Path, list[Log]] = {directory: [] for directory in self.log_dirs}
        for entry in self._all_logs():
            grouped.setdefault(entry.parent_dir, []).append(entry)
        return grouped

    def delete_log(self, topic: str, partition: int) -> bool:
        """Delete the partition's log and its checkpoint entries; False if there was none. Raises
        LogDirFailureError if its dir failed."""
        outcome = self.delete_logs([(topic, partition)])
        if (topic, partition) not in outcome:
            return False
        failure = outcome[(topic, partition)]
        if failure is not None:
            raise failure
        return True

    def delete_logs(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, LogDirFailureError | None]:
        """Delete these partitions' logs, then rewrite the checkpoints of each dir they were in once, as
        Kafka 2.8's batched asyncDelete: a StopReplica of thousands of partitions must not rewrite the
        checkpoints thousands of times. A dir whose deletion or checkpoint fails goes offline. Returns, for
        each partition that had a log, None once deleted or the failure that kept it."""
        outcome: dict[TopicPartition, LogDirFailureError | None] = {}
        directories: set[Path] = set()
        deleted: list[TopicPartition] = []
        renamed: list[tuple[TopicPartition, Log, Path]] = []
        for tp in partitions:
            with self._lock:
                doomed = self._logs.pop(tp, None)
                future = self._future_logs.pop(tp, None)
                self._preferred_dirs.pop(tp, None)
            if future is not None:
                try:
                    future.delete()
                    directories.add(future.parent_dir)
                except LogDirFailureError:
                    pass  # its dir is offline now; the current log goes on regardless
            if doomed is None:
                continue
            try:
                renamed.append((tp, doomed, doomed.rename_for_deletion()))
            except LogDirFailureError as exc:
                outcome[tp] = exc
        # the renames made durable by one fsync of each dir, before any renamed directory is emptied
        synced: set[Path] = set()
        for directory in {doomed.parent_dir for _, doomed, _ in renamed}:
            with contextlib.suppress(OSError):  # its logs fsync it again themselves, and fail there
                fsync_path(directory)
                synced.add(directory)
        for tp, doomed, path in renamed:
            try:
                doomed.finish_deletion(path, parent_synced=doomed.parent_dir in synced)
            except LogDirFailureError as exc:
                outcome[tp] = exc
                continue
            outcome[tp] = None
            directories.add(doomed.parent_dir)
            deleted.append(tp)
        online = directories - self._offline
        if self.cleaner is not None:
            self.cleaner.remove_partitions(online, deleted)
        for directory in online:
            self._write_offsets(directory, REPLICATION_OFFSET_CHECKPOINT, _high_watermark)
            self._write_recovery_checkpoints(directory)
        return outcome

    def _all_logs(self) -> list[Log]:
        """Current and future logs (Kafka's `allLogs`)."""
        with self._lock:
            return [*self._logs.values(), *self._future_logs.values()]

    def _logs_in(self, directory: Path) -> list[Log]:
        name = str(directory)  # compared as strings: see _group_by_dir
        return [entry for entry in self._all_logs() if str(entry.parent_dir) == name]

    def _group_by_dir(self, logs: Iterable[Log]) -> dict[Path, list[Log]]:
        """`logs` by log dir (each of `log_dirs`), in one pass. Keyed by the paths' strings, which pathlib
        caches: its equality, which a dict of Path keys calls too (each log has its own `parent_dir` object),
        is slow enough to matter at 10,000 logs."""
        by_name: dict[str, list[Log]] = {}
        for entry in logs:
            name = str(entry.parent_dir)
            group = by_name.get(name)
            if group is None:
                by_name[name] = group = []
            group.append(entry)
        return {directory: by_name.get(str(directory), []) for directory in self.log_dirs}

    # --- configs ---------------------------------------------------------------------------------------

    def config_for(self, topic: str) -> LogConfig:
        return self._topic_configs.get(topic, self.default_config)

    def set_topic_config(self, topic: str, overrides: Mapping[str, object]) -> LogConfig:
        """Replace the topic's overrides (a config-change notification) and apply them to its logs now.
        Raises InvalidConfigurationError, changing nothing, if a value is invalid."""
        config = LogConfig.from_mapping(overrides, self.default_config)
        with self._lock:
            self._topic_configs[topic] = config
            self._topic_overrides[topic] = dict(overrides)
            affected = [
                entry for logs in (self._logs, self._future_logs) for (name, _), entry in logs.items() if name == topic
            ]
        for entry in affected:
            entry.update_config(config)
        return config

    def set_default_config(self, default_config: LogConfig) -> None:
        """New topic defaults (a dynamic broker config change, Kafka's `DynamicLogConfig`): every log takes
        them at once, under its topic's overrides."""
        with self._lock:
            self.default_config = default_config
            for topic, overrides in self._topic_overrides.items():
                try:
                    self._topic_configs[topic] = LogConfig.from_mapping(overrides, default_config)
                except InvalidConfigurationError:
                    continue  # an override the broker already refused: the topic keeps what it had
            affected = [
                (entry, self.config_for(name))
                for logs in (self._logs, self._future_logs)
                for (name, _), entry in logs.items()
            ]
        for entry, config in affected:
            entry.update_config(config)

    # --- periodic work ---------------------------------------------------------------------------------

    def _online_logs(self) -> list[Log]:
        return [entry for entry in self._all_logs() if entry.parent_dir not in self._offline]

    def cleanup_logs(self) -> int:
        """Apply retention to every online log (but compacted logs when the cleaner runs: its threads apply
        theirs, as Kafka's do); returns the number of segments deleted."""
        deleted = 0
        for entry in self._online_logs():
            if self.cleaner is not None and entry.config.compact and not entry.is_future:
                continue
            try:
                deleted += entry.delete_old_segments()
            except LogError:
                continue  # its dir is offline now (the other dirs carry on), or it was deleted or replaced
        return deleted

    def flush_logs(self) -> None:
        """fsync every online log's rolled segments (Kafka flushes a segment once it rolls), which moves
        the recovery points up to the active segments."""
        for entry in self._online_logs():
            try:
                entry.flush(entry.active_segment_base_offset)
            except LogError:
                continue  # as in cleanup_logs

    def checkpoint_high_watermarks(self) -> None:
        """Write each online dir's `replication-offset-checkpoint`."""
        self._checkpoint_high_watermarks(self._group_by_dir(self._all_logs()))

    def _checkpoint_high_watermarks(self, by_dir: Mapping[Path, Sequence[Log]]) -> None:
        for directory in self.online_dirs:
            self._write_offsets(directory, REPLICATION_OFFSET_CHECKPOINT, _high_watermark, by_dir.get(directory, ()))

    def checkpoint_recovery_points(self) -> None:
        """Write each online dir's `recovery-point-offset-checkpoint` and `log-start-offset-checkpoint`."""
        self._checkpoint_recovery_points(self._group_by_dir(self._all_logs()))

    def _checkpoint_recovery_points(self, by_dir: Mapping[Path, Sequence[Log]]) -> None:
        # online_dirs again: a dir may have failed since `by_dir` was made
        for directory in self.online_dirs:
            self._write_recovery_checkpoints(directory, by_dir.get(directory, ()))

    def _write_recovery_checkpoints(self, directory: Path, entries: Sequence[Log] | None = None) -> None:
        """The dir's recovery points and log start offsets, of `entries` (default: its logs now)."""
        if entries is None:
            entries = self._logs_in(directory)
        self._write_offsets(directory, RECOVERY_POINT_OFFSET_CHECKPOINT, _recovery_point, entries)
        self._write_offsets(directory, LOG_START_OFFSET_CHECKPOINT, _log_start_offset_to_checkpoint, entries)

    def _write_offsets(
        self,
        directory: Path,
        name: str,
        offset_of: Callable[[Log], int | None],
        entries: Sequence[Log] | None = None,
    ) -> None:
        """Write one checkpoint file of the dir: `offset_of` each of `entries` (default: the dir's logs now)
        that has one."""
        if entries is None:
            entries = self._logs_in(directory)
        offsets: dict[TopicPartition, int] = {}
        for entry in entries:
            offset = offset_of(entry)
            if offset is not None:
                offsets[(entry.topic, entry.partition)] = offset
        path = directory / name
        try:
            with self._checkpoint_lock:
                if self._checkpointed.get(path) == offsets:
                    return
                self._checkpointed.pop(path, None)  # unknown until this write is known done
                write_checkpoint(path, format_offsets(offsets))
                self._checkpointed[path] = offsets
        except OSError as exc:
            self._dir_io_failed(directory, exc)

    # --- dir failures ----------------------------------------------------------------------------------

    def _dir_io_failed(self, directory: Path, exc: OSError) -> None:
        failure = LogDirFailureError(str(directory), str(exc))
        log.error("Log directory %s is offline: %s", directory, exc)
        self._take_offline(directory, failure)

    def _dir_failed(self, failure: LogDirFailureError) -> None:
        """A log's I/O failed. Called under that log's lock, so it takes no lock itself (copying the
        dict's values is atomic under the GIL) and marks the neighbours without locking them."""
        log.error("Log directory %s is offline: %s", failure.log_dir, failure)
        self._take_offline(Path(failure.log_dir), failure)

    def _take_offline(self, directory: Path, failure: LogDirFailureError) -> None:
        newly = directory not in self._offline
        self._offline.add(directory)
        if newly and self._on_dir_offline is not None:
            self._on_dir_offline(directory)  # must not block: it may run under a log's lock
        for entry in [*self._logs.values(), *self._future_logs.values()]:
            if entry.parent_dir == directory:
                entry.mark_offline(failure)


def _high_watermark(entry: Log) -> int:
    return entry.high_watermark


def _recovery_point(entry: Log) -> int:
    return entry.recovery_point


def _log_start_offset_to_checkpoint(entry: Log) -> int | None:
    """Only log start offsets that the segments do not already imply, as Kafka writes them."""
    start = entry.log_start_offset
    return start if start > entry.first_segment_base_offset else None

"""The on-disk partition log: segments, sparse indexes, recovery, checkpoints, retention.

A library for the broker's replica manager. It stores record batches exactly as they arrive (framing,
CRC and in-place offset patching come from `kafkaops.cluster.protocol.records`) in Kafka's own directory
layout and file formats, so that a directory written here reads like a Kafka 2.8 broker's.

    config        LogConfig: the topic configs a log obeys, parsed from a plain mapping
    checkpoints   Kafka's checkpoint text files (offsets per partition, leader epochs), atomic writes
    epoch_cache   LeaderEpochCache: epoch → start offset, answering OffsetForLeaderEpoch
    index         the sparse offset and time indexes of a segment
    segment       LogSegment: one `.log` file with its indexes; recovery of a torn tail
    file_records  FileRecords: a slice of a segment's file a Fetch response sends with sendfile
    log           Log: one partition; append as leader or follower, read, truncate, retention, flush
    manager       LogManager: every log of a broker's `log.dirs`, their checkpoints, dir failures
    log_cleaner   LogCleaner: compaction of `cleanup.policy=compact` logs in background threads, with
                  log_cleaner_manager (which log next, cleaner-offset-checkpoint), offset_map, cleaner_config
                  and segment_swap (crash-safe replacement of cleaned segments)

In outline, as the replica manager will use it:

    manager = LogManager(["/data/kafka"], default_config=LogConfig(...), topic_configs=from_zookeeper)
    manager.startup()                                       # loads and, after a crash, recovers
    log = manager.get_or_create_log("orders", 0)
    log.assign_epoch_start_offset(leader_epoch, log.log_end_offset)     # on becoming leader
    info = log.append_as_leader(batch_bytes, leader_epoch)              # Produce
    log.update_high_watermark(min_isr_leo)                              # followers caught up
    result = log.read(fetch_offset, max_bytes, max_offset=log.high_watermark)   # consumer Fetch
    result = log.read_file_records(...)     # the same, left in the file for the network layer's sendfile
    ...                                                     # every few seconds / minutes:
    manager.checkpoint_high_watermarks(); manager.flush_logs(); manager.checkpoint_recovery_points()
    manager.cleanup_logs()
    manager.shutdown()

Imports only `kafkaops.cluster.protocol` and the floor, `kafkaops.cluster.common`.
"""

from .checkpoints import EpochEntry
from .cleaner_config import CleanerConfig
from .config import LogConfig
from .epoch_cache import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, LeaderEpochCache
from .log import Log, LogAppendInfo, LogReadResult, remove_log_dir
from .manager import LogManager
from .segment import TimestampOffset

__all__ = [
    "UNDEFINED_EPOCH",
    "UNDEFINED_EPOCH_OFFSET",
    "CleanerConfig",
    "EpochEntry",
    "LeaderEpochCache",
    "Log",
    "LogAppendInfo",
    "LogConfig",
    "LogManager",
    "LogReadResult",
    "TimestampOffset",
    "remove_log_dir",
]

"""The log cleaner's settings (Kafka 2.8's `CleanerConfig`), from the broker's `log.cleaner.*` properties.

    log.cleaner.enable                    enable_cleaner             true
    log.cleaner.threads                   num_threads                1
    log.cleaner.dedupe.buffer.size        dedupe_buffer_size         128 MiB, shared by the threads
    log.cleaner.io.buffer.load.factor     dedupe_buffer_load_factor  0.9 (how full the offset map may get)
    log.cleaner.io.buffer.size            io_buffer_size             512 KiB: read + write buffers, per thread
    log.cleaner.io.max.bytes.per.second   max_io_bytes_per_second    unlimited
    log.cleaner.backoff.ms                backoff_ms                 15000: sleep when no log needs cleaning
    message.max.bytes                     max_message_size           the largest batch a buffer must hold

The per-topic settings (`min.cleanable.dirty.ratio`, `delete.retention.ms`, `min.compaction.lag.ms`,
`max.compaction.lag.ms`, `cleanup.policy`) are LogConfig's, with `log.cleaner.*` broker defaults.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CleanerConfig:
    num_threads: int = 1
    dedupe_buffer_size: int = 128 * 1024 * 1024
    dedupe_buffer_load_factor: float = 0.9
    io_buffer_size: int = 512 * 1024
    max_message_size: int = 32 * 1024 * 1024
    max_io_bytes_per_second: float = float("inf")
    backoff_ms: int = 15 * 1000
    enable_cleaner: bool = True
    hash_algorithm: str = "MD5"

    @property
    def offset_map_memory(self) -> int:
        """Each thread's share of the dedupe buffer (Kafka caps it at Int.MaxValue)."""
        return min(self.dedupe_buffer_size // max(self.num_threads, 1), 2**31 - 1)

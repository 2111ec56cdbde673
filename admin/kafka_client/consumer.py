"""Consuming some partitions without a group: Kafka's consumer used with `assign()`, its
`auto.offset.reset` and `isolation.level` settings."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from enum import IntEnum
from typing import Any

from kafkaops.admin.kafka_client.client import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, KafkaClient
from kafkaops.admin.kafka_client.fetcher import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_WAIT_MS,
    DEFAULT_PARTITION_MAX_BYTES,
    READ_COMMITTED,
    READ_UNCOMMITTED,
)
from kafkaops.admin.kafka_client.records import ConsumerRecord
from kafkaops.cluster.common.errors import (
    BrokerError,
    InvalidArgumentError,
    OffsetOutOfRangeError,
    UnknownTopicOrPartitionError,
)
from kafkaops.cluster.zk.values import TopicPartition

_ISOLATION_LEVELS = {"read_uncommitted": READ_UNCOMMITTED, "read_committed": READ_COMMITTED}


def parse_isolation_level(name: str) -> int:
    """Kafka's `isolation.level` setting by name. Raises InvalidArgumentError with Kafka's ConfigException text."""
    if name not in _ISOLATION_LEVELS:
        raise InvalidArgumentError(
            f"Invalid value {name} for configuration isolation.level: String must be one of: "
            "read_committed, read_uncommitted"
        )
    return _ISOLATION_LEVELS[name]


class OffsetResetPolicy(IntEnum):
    EARLIEST = EARLIEST_TIMESTAMP
    LATEST = LATEST_TIMESTAMP
    NONE = 0


class PartitionConsumer:
    """Kafka's consumer with `assign()` and no group: positions start at `start` (EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP or an absolute offset) and move past what `poll` returns; an offset out of range
    is reset by `reset` (Kafka's auto.offset.reset; NONE raises OffsetOutOfRangeError with Kafka's text)."""

    def __init__(
        self,
        client: KafkaClient,
        topic: str,
        partitions: Sequence[int] | None = None,
        start: int = LATEST_TIMESTAMP,
        reset: OffsetResetPolicy = OffsetResetPolicy.LATEST,
        *,
        max_wait_ms: int = DEFAULT_MAX_WAIT_MS,
        max_bytes: int = DEFAULT_MAX_BYTES,
        partition_max_bytes: int = DEFAULT_PARTITION_MAX_BYTES,
        isolation_level: int = READ_UNCOMMITTED,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.client = client
        self.topic = topic
        ids = client.partitions_for(topic) if partitions is None else list(partitions)
        if partitions is not None:
            known = set(client.partitions_for(topic))
            missing = [p for p in ids if p not in known]
            if missing:
                raise UnknownTopicOrPartitionError(
                    f"{topic}-{missing[0]}: This server does not host this topic-partition."
                )
        self.reset = reset
        self.max_wait_ms = max_wait_ms
        self.max_bytes = max_bytes
        self.partition_max_bytes = partition_max_bytes
        self.isolation_level = isolation_level
        self._clock = clock
        self._sleep = sleep
        self.positions: dict[TopicPartition, int] = {}
        for p in ids:
            tp = TopicPartition(topic, p)
            self.positions[tp] = self._resolve(tp, start) if start < 0 else start

    def _resolve(self, tp: TopicPartition, timestamp: int) -> int:
        return self.client.list_offsets(tp.topic, tp.partition, timestamp, self.isolation_level).offset

    def _reset(self, tp: TopicPartition) -> None:
        if self.reset is OffsetResetPolicy.NONE:
            raise OffsetOutOfRangeError(
                f"Offsets out of range with no configured reset policy for partitions: {{{tp}={self.positions[tp]}}}"
            )
        self.positions[tp] = self._resolve(tp, int(self.reset))

    def poll(self, timeout_ms: int) -> list[ConsumerRecord]:
        """Records from every assigned partition, waiting up to `timeout_ms` for some; [] if none came.

        Retriable errors (a leader moved or died) are retried inside the timeout; others are raised.
        """
        deadline = self._clock() + max(timeout_ms, 0) / 1000
        while True:
            remaining_ms = max(int((deadline - self._clock()) * 1000), 0)
            results = self.client.fetch_many(
                dict(self.positions),
                min(self.max_wait_ms, remaining_ms),
                self.max_bytes,
                self.partition_max_bytes,
                self.isolation_level,
            )
            records, retry = apply_fetch_results(results, self.positions, self._reset)
            if records or self._clock() >= deadline:
                return records
            if retry:
                self._sleep(min(self.client.retry_backoff_ms / 1000, max(deadline - self._clock(), 0)))


def apply_fetch_results(
    results: Mapping[TopicPartition, Any], positions: dict[TopicPartition, int], reset: Callable[[TopicPartition], None]
) -> tuple[list[ConsumerRecord], bool]:
    """A fetch's answers applied to `positions` (a consumer's next offsets), in partition order: the records
    read and whether a retriable error calls for another try. Out of range resets the partition (`reset`);
    another non-retriable error is raised; an answer for a partition no longer in `positions` (revoked while
    the fetch was out) is dropped."""
    records: list[ConsumerRecord] = []
    retry = False
    for tp, result in sorted(results.items()):
        if tp not in positions:
            continue
        if isinstance(result, OffsetOutOfRangeError):
            reset(tp)
        elif isinstance(result, BrokerError):
            if not result.retriable:
                raise result
            retry = True
        else:
            records.extend(result.records)
            positions[tp] = result.next_offset
    return records, retry

"""Kafka's `DelayedDeleteRecords`: a DeleteRecords whose leader moved its log start offset, parked until the
partition's low watermark (the smallest log start offset among its live replicas, isr.low_watermark) reaches
the offset asked for, so that the records are gone from every replica when the client hears back.

Each partition's wait (Kafka's `DeleteRecordsPartitionStatus`) starts as REQUEST_TIMED_OUT and ends with the
low watermark once it reaches the offset, or with NOT_LEADER_OR_FOLLOWER / UNKNOWN_TOPIC_OR_PARTITION /
KAFKA_STORAGE_ERROR when this broker stops leading the partition, loses it or its log dir; partitions that
failed before waiting keep their error. Watched under its partitions in the replica manager's delete-records
purgatory, checked after each follower fetch of them and each loss of leadership.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kafkaops.cluster.broker.delayed_operation import DelayedOperation
from kafkaops.cluster.common import errors
from kafkaops.cluster.zk.values import TopicPartition

INVALID_LOW_WATERMARK = -1
"""Kafka's `DeleteRecordsResponse.INVALID_LOW_WATERMARK`."""


@dataclass(slots=True)
class DeleteRecordsPartitionStatus:
    """One partition's answer so far: the offset asked for, its error code and low watermark."""

    required_offset: int
    error_code: int
    low_watermark: int = INVALID_LOW_WATERMARK
    acks_pending: bool = False


LowWatermark = Callable[[TopicPartition], tuple[int, int]]
"""(error code, low watermark) of a partition now: NONE and its low watermark while this broker leads it."""


class DelayedDeleteRecords(DelayedOperation[TopicPartition, dict[TopicPartition, DeleteRecordsPartitionStatus]]):
    """Completes with every partition's status once none is pending, or at its timeout."""

    def __init__(
        self, timeout_ms: int, statuses: dict[TopicPartition, DeleteRecordsPartitionStatus], low_watermark: LowWatermark
    ) -> None:
        super().__init__(timeout_ms)
        self.statuses = statuses
        self._low_watermark = low_watermark
        for status in statuses.values():
            if status.error_code == errors.NONE:
                # cleared when the low watermark gets there
                status.acks_pending = True
                status.error_code = errors.RequestTimedOutError.code

    def watch_keys(self) -> Iterable[TopicPartition]:
        return self.statuses.keys()

    def try_complete(self, key: TopicPartition | None) -> bool:
        checked = self.statuses.items() if key is None else [(key, self.statuses[key])] if key in self.statuses else []
        for tp, status in checked:
            if not status.acks_pending:
                continue
            code, low_watermark = self._low_watermark(tp)
            if code != errors.NONE or low_watermark >= status.required_offset:
                status.acks_pending = False
                status.error_code = code
                status.low_watermark = low_watermark if code == errors.NONE else INVALID_LOW_WATERMARK
        if any(status.acks_pending for status in self.statuses.values()):
            return False
        return self.force_complete()

    def on_complete(self) -> dict[TopicPartition, DeleteRecordsPartitionStatus]:
        return self.statuses

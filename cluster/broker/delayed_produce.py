"""Kafka's `DelayedProduce`: a produce with acks=all, parked until every partition it appended to has a high
watermark past its batch (kafka-protocol.md §5).

Each partition's wait (Kafka's `ProducePartitionStatus`) ends one of three ways: acknowledged (the HW
reached the batch's end), lost (this broker no longer leads the partition: a LeaderAndIsr made it a
follower, a StopReplica stopped it, its log dir failed, or the broker is shutting down), or still
pending when the request's timeout expires. The answer per partition, decided when the whole produce
completes: REQUEST_TIMED_OUT, NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS_AFTER_APPEND (acknowledged, but
the ISR has shrunk below `min.insync.replicas` meanwhile), or no error.

Watched under its partitions in the replica manager's produce purgatory, which checks a partition after
each high-watermark move and each loss of leadership.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kafkaops.cluster.broker.delayed_operation import DelayedOperation
from kafkaops.cluster.broker.partition import Partition
from kafkaops.cluster.common import errors
from kafkaops.cluster.zk.values import TopicPartition


@dataclass(slots=True)
class ProducePartitionStatus:
    """One partition's wait: the offset its HW must reach, and how the wait ended so far."""

    partition: Partition
    required_offset: int
    acks_pending: bool = True
    lost: bool = False


class DelayedProduce(DelayedOperation[TopicPartition, dict[TopicPartition, int]]):
    """Completes with an error code per partition once no partition is pending, or at its timeout.

    `leads(tp, partition)` says whether this broker still leads `tp` with that `Partition`;
    `min_insync_replicas(topic)` is the topic's `min.insync.replicas`.
    """

    def __init__(
        self,
        timeout_ms: int,
        statuses: dict[TopicPartition, ProducePartitionStatus],
        leads: Callable[[TopicPartition, Partition], bool],
        min_insync_replicas: Callable[[str], int],
    ) -> None:
        super().__init__(timeout_ms)
        self.statuses = statuses
        self._leads = leads
        self._min_insync_replicas = min_insync_replicas
        self._pending = sum(status.acks_pending for status in statuses.values())

    def watch_keys(self) -> Iterable[TopicPartition]:
        return self.statuses.keys()

    def try_complete(self, key: TopicPartition | None) -> bool:
        """Kafka's `tryComplete`, looking only at the partition checked (all of them at first)."""
        if key is None:
            for tp, status in self.statuses.items():
                self._check(tp, status)
        else:
            checked = self.statuses.get(key)
            if checked is not None:
                self._check(key, checked)
        return self._pending == 0 and self.force_complete()

    def _check(self, tp: TopicPartition, status: ProducePartitionStatus) -> None:
        if not status.acks_pending:
            return
        if not self._leads(tp, status.partition):
            status.lost = True
        elif status.partition.high_watermark < status.required_offset:
            return
        status.acks_pending = False
        self._pending -= 1

    def on_complete(self) -> dict[TopicPartition, int]:
        codes: dict[TopicPartition, int] = {}
        for tp, status in self.statuses.items():
            if status.acks_pending:
                codes[tp] = errors.RequestTimedOutError.code
            elif status.lost:
                codes[tp] = errors.NotLeaderOrFollowerError.code
            elif len(status.partition.isr) < self._min_insync_replicas(tp.topic):
                codes[tp] = errors.NotEnoughReplicasAfterAppendError.code
            else:
                codes[tp] = errors.NONE
        return codes

"""Idempotent producers' state per partition (Kafka's `ProducerStateManager`, without transactions).

For each producer id the partition remembers the producer epoch and its last five batches (first and
last sequence, first and last offset). A batch that repeats one of them is a client retry of a batch
the leader already appended (the answer got lost): Kafka answers it with the original offsets and does
not append it again (`UnifiedLog.analyzeAndValidateProducerState`, kafka-protocol.md §5 item 7).

Leaders and followers update it on every append, so a follower that becomes leader already knows the
producers; a broker that restarts rebuilds it from the batch headers of its log.

Sequence gaps are accepted rather than refused with OUT_OF_ORDER_SEQUENCE_NUMBER: the clients we serve
can only recover from that with InitProducerId v3+ (an epoch bump), which we do not advertise (§5).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from kafkaops.cluster.protocol.records import BatchHeader

NUM_BATCHES_TO_RETAIN = 5
"""Kafka's `ProducerStateEntry.NumBatchesToRetain`: also the client's max in-flight requests."""

_SEQUENCE_WRAP = 1 << 31


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    first_sequence: int
    last_sequence: int
    first_offset: int
    last_offset: int


def last_sequence(header: BatchHeader) -> int:
    """The batch's last sequence number; sequences wrap from Integer.MAX_VALUE to 0, as Kafka's."""
    return (header.base_sequence + header.last_offset_delta) % _SEQUENCE_WRAP


class ProducerStateManager:
    def __init__(self) -> None:
        self._producers: dict[int, tuple[int, deque[BatchMetadata]]] = {}

    def __len__(self) -> int:
        return len(self._producers)

    def find_duplicate(self, header: BatchHeader) -> BatchMetadata | None:
        """The batch this one repeats (same producer, epoch and sequence range), if any."""
        if not header.is_idempotent:
            return None
        entry = self._producers.get(header.producer_id)
        if entry is None or entry[0] != header.producer_epoch:
            return None
        end = last_sequence(header)
        for batch in entry[1]:
            if batch.first_sequence == header.base_sequence and batch.last_sequence == end:
                return batch
        return None

    def update(self, header: BatchHeader) -> None:
        """Record an appended batch (its offsets are final: a follower's as fetched, a leader's as assigned)."""
        if not header.is_idempotent or header.is_control:
            return
        entry = self._producers.get(header.producer_id)
        if entry is None or header.producer_epoch > entry[0]:
            entry = (header.producer_epoch, deque(maxlen=NUM_BATCHES_TO_RETAIN))
            self._producers[header.producer_id] = entry
        elif header.producer_epoch < entry[0]:
            return  # an old epoch's batch replicated late: the newer epoch's state stands
        entry[1].append(
            BatchMetadata(header.base_sequence, last_sequence(header), header.base_offset, header.last_offset)
        )

    def rebuild(self, headers: Iterable[BatchHeader]) -> None:
        """Forget everything and replay a log's batch headers (after a restart or a truncation)."""
        self._producers.clear()
        for header in headers:
            self.update(header)

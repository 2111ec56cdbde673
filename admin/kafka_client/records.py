"""What the client hands out and takes in per record: Kafka's `ConsumerRecord`, `TimestampType`, and the
(key, value, headers) a producer sends."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum


class TimestampType(IntEnum):
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    def __str__(self) -> str:
        # org.apache.kafka.common.record.TimestampType's names, as the console consumer prints them
        return "CreateTime" if self is TimestampType.CREATE_TIME else "LogAppendTime"


@dataclass(frozen=True, slots=True)
class ConsumerRecord:
    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: TimestampType
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    leader_epoch: int = -1


ProducerRecordTuple = tuple[bytes | None, bytes | None, Sequence[tuple[str, bytes | None]] | None]
"""What `produce` takes per record: (key, value, headers), headers may be None."""

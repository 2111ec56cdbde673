"""Kafka's `ConsoleConsumer`: its option checks (`ConsumerConfig`) and its `process` loop, which reads
records and writes them with the formatter until `--max-messages` or `--timeout-ms` ends it.

The loop writes to the stream the caller passes in and nothing else: the caller prints Kafka's texts
for how it ended (an ERROR line for a timeout or an error, the record count) and picks the exit code.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import BinaryIO, Protocol

from kafkaops.admin.console.message_formatter import DefaultMessageFormatter
from kafkaops.admin.kafka_client import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    ConsumerRecord,
    OffsetResetPolicy,
)
from kafkaops.cluster.common.errors import UsageError


@dataclass(frozen=True)
class ConsumerSettings:
    topic: str
    partition: int | None
    start: int
    reset: OffsetResetPolicy
    max_messages: int
    timeout_ms: int


def consumer_settings(
    topic: str | None,
    partition: int | None,
    offset: str | None,
    from_beginning: bool,
    max_messages: int | None,
    timeout_ms: int | None,
) -> ConsumerSettings:
    """Kafka 2.8's `ConsoleConsumer.ConsumerConfig` checks, in its order, with its texts (UsageError)."""
    if topic is None:
        raise UsageError("Exactly one of whitelist/topic is required.")
    if partition is not None:
        if from_beginning and offset is not None:
            raise UsageError("Options from-beginning and offset cannot be specified together.")
    elif offset is not None:
        raise UsageError("The partition is required when offset is specified.")
    if offset is None:
        start = EARLIEST_TIMESTAMP if from_beginning else LATEST_TIMESTAMP
    elif offset.lower() == "earliest":
        start = EARLIEST_TIMESTAMP
    elif offset.lower() == "latest":
        start = LATEST_TIMESTAMP
    else:
        try:
            start = int(offset)
        except ValueError:
            start = -1
        if start < 0:
            raise UsageError(
                f"The provided offset value '{offset}' is incorrect. Valid values are 'earliest', 'latest', or a "
                "non-negative long."
            )
    reset = OffsetResetPolicy.EARLIEST if from_beginning else OffsetResetPolicy.LATEST
    return ConsumerSettings(
        topic,
        partition,
        start,
        reset,
        -1 if max_messages is None else max_messages,
        -1 if timeout_ms is None else timeout_ms,
    )


class StopReason(Enum):
    """Why `ConsoleConsumer.process` returned (errors and Ctrl-C are raised instead)."""

    MAX_MESSAGES = "max-messages"
    """`--max-messages` records were written."""
    TIMEOUT = "timeout"
    """No record came for `--timeout-ms`: where Kafka's consumer throws its TimeoutException."""


class RecordPoller(Protocol):
    """What the loop needs of a consumer (`kafka_client.PartitionConsumer` is one)."""

    def poll(self, timeout_ms: int) -> list[ConsumerRecord]: ...


class ConsoleConsumer:
    """ConsoleConsumer.process: poll, write each record as the formatter shapes it, flush after the last
    record of each poll. `max_messages` and `timeout_ms` are -1 for no limit. Single-threaded."""

    POLL_MS = 1000
    """The longest single poll, so a timeout is noticed within a second of falling due."""

    def __init__(
        self,
        consumer: RecordPoller,
        formatter: DefaultMessageFormatter,
        max_messages: int = -1,
        timeout_ms: int = -1,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.consumer = consumer
        self.formatter = formatter
        self.max_messages = max_messages
        self.timeout_ms = timeout_ms
        self._clock = clock
        self.message_count = 0
        """Records written so far; still right when `process` raised (Kafka reports it on every exit)."""

    def process(self, out: BinaryIO) -> StopReason:
        """Write records to `out` until `max_messages` were written or none came for `timeout_ms`.

        Raises what the consumer raises (KafkaOpsError), what `out` raises (BrokenPipeError when the
        reader went away) and KeyboardInterrupt; `out` is flushed on the way out whatever happened
        (an OSError while flushing then is dropped: the stream is gone).
        """
        pending: list[ConsumerRecord] = []
        waiting_since = self._clock()
        try:
            while self.max_messages < 0 or self.message_count < self.max_messages:
                if not pending:
                    pending = self.consumer.poll(self._poll_ms(waiting_since))
                    if not pending:
                        if self.timeout_ms >= 0 and (self._clock() - waiting_since) * 1000 >= self.timeout_ms:
                            return StopReason.TIMEOUT
                        continue
                    pending.reverse()
                record = pending.pop()
                self.message_count += 1
                out.write(self.formatter.format(record))
                waiting_since = self._clock()
                if not pending:
                    out.flush()
        finally:
            with contextlib.suppress(OSError):
                out.flush()
        return StopReason.MAX_MESSAGES

    def _poll_ms(self, waiting_since: float) -> int:
        """What is left of the timeout since the last record, at most a second."""
        if self.timeout_ms < 0:
            return self.POLL_MS
        left = max(int(self.timeout_ms - (self._clock() - waiting_since) * 1000), 0)
        return min(left, self.POLL_MS)


def group_id_setting(group: str | None, consumer_props: dict[str, str]) -> str | None:
    """The group the console consumer joins: `--group` or `--consumer-property group.id=...` (None: read
    without a group). Raises UsageError with Kafka's text when the two name different groups."""
    provided = list(dict.fromkeys(g for g in (group, consumer_props.get("group.id")) if g is not None))
    if len(provided) > 1:
        detected = "'" + "', '".join(provided) + "'"
        raise UsageError(
            "The group ids provided in different places (directly using '--group', via '--consumer-property', or "
            f"via '--consumer.config') do not match. Detected group ids: {detected}"
        )
    return provided[0] if provided else None


def group_offset_reset(from_beginning: bool, consumer_props: dict[str, str]) -> OffsetResetPolicy:
    """Where a group member without a committed offset starts: `--from-beginning` (earliest) or the
    `auto.offset.reset` property (latest by default). Raises UsageError with Kafka's texts."""
    value = consumer_props.get("auto.offset.reset")
    if from_beginning and value is not None and value != "earliest":
        raise UsageError(
            f"Can't simultaneously specify --from-beginning and 'auto.offset.reset={value}', please remove one option"
        )
    if from_beginning:
        return OffsetResetPolicy.EARLIEST
    policies = {
        "earliest": OffsetResetPolicy.EARLIEST,
        "latest": OffsetResetPolicy.LATEST,
        "none": OffsetResetPolicy.NONE,
    }
    if (value or "latest") not in policies:
        raise UsageError(
            f"Invalid value {value} for configuration auto.offset.reset: String must be one of: latest, earliest, none"
        )
    return policies[value or "latest"]

"""Kafka's `ConsoleProducer` loop: each batch of input lines read as records by the LineMessageReader and
sent together, one batch per partition involved.

It prints nothing: each batch's outcome is handed back, and the caller reports the failed sends (Kafka's
ErrorLoggingCallback lines) and shows its prompt between batches.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from kafkaops.admin.console.line_message_reader import LineMessageReader
from kafkaops.admin.kafka_client import ProducerRecordTuple, SendOutcome
from kafkaops.cluster.common.errors import KafkaOpsError


class RecordSender(Protocol):
    """What the loop needs of a producer (`kafka_client.BatchSender` is one)."""

    def send(self, records: Sequence[ProducerRecordTuple]) -> list[SendOutcome]: ...


@dataclass(frozen=True)
class SentLines:
    """What became of one batch of lines: each send's outcome, and the error of a line the reader could
    not parse (the lines before it were sent; nothing after it is read)."""

    outcomes: list[SendOutcome]
    error: KafkaOpsError | None = None

    @property
    def failed(self) -> list[SendOutcome]:
        return [outcome for outcome in self.outcomes if outcome.error is not None]


def send_lines(sender: RecordSender, reader: LineMessageReader, batches: Iterable[list[str]]) -> Iterator[SentLines]:
    """Send `batches` of lines as they come, one SentLines each; stops after a line the reader refuses,
    as Kafka's KafkaException stops its producer. Lines are numbered from 1 across batches."""
    line_number = 0
    for lines in batches:
        records: list[ProducerRecordTuple] = []
        bad: KafkaOpsError | None = None
        for line in lines:
            line_number += 1
            try:
                records.append(reader.read(line, line_number))
            except KafkaOpsError as error:
                bad = error
                break
        yield SentLines(sender.send(records) if records else [], bad)
        if bad is not None:
            return

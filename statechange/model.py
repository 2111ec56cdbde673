"""The state-change log model: a raw entry as read (what the merger moves) and its parsed form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class RawEntry(NamedTuple):
    """One log entry exactly as it sits in its file: the line that starts it and its continuation lines.

    A NamedTuple, not a dataclass: the streaming merger makes one per entry, and its `key` is read by
    `heapq.merge` through `operator.itemgetter(0)`, the cheapest key there is.
    """

    key: bytes
    """The raw fixed-width timestamp in its brackets, as the entry's first line starts
    (`[2024-05-01 13:00:00,123]`), or b"" for lines that precede a file's first timestamp: such an
    orphan entry sorts before everything else of its stream."""
    text: bytes
    """The entry's original bytes without the `\\n` that ends its last line (a writer adds it back, also
    to a file's last line that had none); `\\r` of `\\r\\n` endings stays."""
    source: str
    line: int
    """1-based number of the entry's first line in `source`."""


class Partition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        # org.apache.kafka.common.TopicPartition.toString, the 1.0+ log form
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True, slots=True)
class Entry:
    """A parsed entry. Fields that the entry's first line does not state are None (or empty)."""

    timestamp: str | None
    level: str | None
    actor: str | None
    """"controller" or "broker": who wrote the message (§4.2 prefixes)."""
    actor_id: int | None
    controller_epoch: int | None
    """The writing controller's epoch, or for a broker the epoch of the controller whose request it handles."""
    partitions: tuple[Partition, ...]
    """Every partition the first line names, in order of appearance, without repeats."""
    message: str
    """The first line after timestamp and level, without the ` (state.change.logger)` suffix; the whole
    line when it does not follow the log4j layout."""
    continuation: tuple[str, ...]
    """The following lines (stack trace, wrapped message), without line terminators."""
    source: str
    line: int

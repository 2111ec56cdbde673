"""log4j's `%d` timestamp, `yyyy-MM-dd HH:mm:ss,SSS`, as Kafka's log lines and tools print it.

Kafka's `log4j.properties` lays its lines out as `[%d] %p %m (%c)%n`; `%d` is log4j's ISO8601 date
(`2024-05-01 13:00:00,123`) in the JVM's zone, and `kafka-replica-verification` prints the same text
through `SimpleDateFormat("yyyy-MM-dd HH:mm:ss,SSS")`. Writers that stamp many lines a second (the
state-change log) format the seconds once per second, as log4j's own `CachedDateFormat` does, and
append the milliseconds from `MILLIS_SUFFIXES`.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

_SECONDS_FORMAT = "%Y-%m-%d %H:%M:%S"


def second_text(moment: datetime) -> str:
    """The `yyyy-MM-dd HH:mm:ss` part of the timestamp."""
    return moment.strftime(_SECONDS_FORMAT)


MILLIS_SUFFIXES: tuple[str, ...] = tuple(f",{millis:03d}" for millis in range(1000))
"""`,SSS` of each millisecond 0..999: a writer that caches `second_text` appends one, no formatting."""


def with_millis(second: str, millis: int) -> str:
    """The timestamp from its `second_text` and the milliseconds within that second (0..999)."""
    return second + MILLIS_SUFFIXES[millis]


def timestamp(moment: datetime) -> str:
    """`yyyy-MM-dd HH:mm:ss,SSS` of `moment` (its microseconds truncated to milliseconds)."""
    return f"{moment.strftime(_SECONDS_FORMAT)},{moment.microsecond // 1000:03d}"


def timestamp_ms(time_ms: int, tz: tzinfo | None = None) -> str:
    """`yyyy-MM-dd HH:mm:ss,SSS` of a time in milliseconds since the epoch, in `tz` (None: the local
    zone, the JVM's default)."""
    return f"{datetime.fromtimestamp(time_ms // 1000, tz).strftime(_SECONDS_FORMAT)},{time_ms % 1000:03d}"

"""kafka-consumer-perf-test's loop and texts: Kafka 2.8's `ConsumerPerformance` over a group member.

    consume      poll (100 ms) until `--messages` records or `--timeout` ms without one; a progress line
                 every `--reporting-interval` ms with --show-detailed-stats
    header       start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec,
                 rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
    summary      the same columns for the whole run (Kafka's `%.4f`, Java's Infinity / NaN)

Pure but for the consumer it is handed (anything with `poll(timeout_ms)` and a `join_time_ms` total);
the clock is injected (epoch milliseconds), lines go to the `emit` callback.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from kafkaops.admin.kafka_client.records import ConsumerRecord

POLL_MS = 100
HEADER_FIELDS = ", rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
DEFAULT_DATE_FORMAT = "yyyy-MM-dd HH:mm:ss:SSS"
MB = 1024 * 1024


class GroupPoller(Protocol):
    join_time_ms: float

    def poll(self, timeout_ms: int) -> list[ConsumerRecord]: ...


def header(detailed: bool) -> str:
    if detailed:
        return "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec" + HEADER_FIELDS
    return "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec" + HEADER_FIELDS


def java_fixed(value: float) -> str:
    """`String.format("%.4f")`: Java's texts for the infinities and NaN."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return f"{value:.4f}"


def _div(a: float, b: float) -> float:
    """Java's double division: x/0 is ±Infinity, 0/0 NaN."""
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, a)
    return a / b


_DATE_TOKENS = re.compile(r"y+|M+|d+|H+|m+|s+|S+|'[^']*'")


def java_date_format(pattern: str, epoch_ms: int) -> str:
    """`SimpleDateFormat(pattern).format` in the local zone, for the letters the perf tools use (y M d H m s
    S and quoted text); other characters are copied."""
    moment = dt.datetime.fromtimestamp(epoch_ms / 1000).astimezone()
    values = {
        "y": moment.year,
        "M": moment.month,
        "d": moment.day,
        "H": moment.hour,
        "m": moment.minute,
        "s": moment.second,
        "S": epoch_ms % 1000,
    }

    def token(match: re.Match[str]) -> str:
        text = match.group(0)
        if text.startswith("'"):
            return text[1:-1] or "'"
        if text[0] == "y" and len(text) == 2:
            return f"{values['y'] % 100:02d}"
        return str(values[text[0]]).zfill(len(text))

    return _DATE_TOKENS.sub(token, pattern)


@dataclass(frozen=True)
class PerfSettings:
    messages: int
    timeout_ms: int = 10000
    reporting_interval_ms: int = 5000
    detailed: bool = False
    date_format: str = DEFAULT_DATE_FORMAT


@dataclass
class PerfResult:
    start_ms: int
    end_ms: int
    messages: int
    bytes: int
    join_time_ms: int
    timed_out: bool

    def summary(self, date_format: str = DEFAULT_DATE_FORMAT) -> str:
        """Kafka's final line (without --show-detailed-stats)."""
        elapsed_s = (self.end_ms - self.start_ms) / 1000
        fetch_ms = self.end_ms - self.start_ms - self.join_time_ms
        mb = self.bytes / MB
        return ", ".join(
            [
                java_date_format(date_format, self.start_ms),
                java_date_format(date_format, self.end_ms),
                java_fixed(mb),
                java_fixed(_div(mb, elapsed_s)),
                str(self.messages),
                java_fixed(_div(self.messages, elapsed_s)),
                str(self.join_time_ms),
                str(fetch_ms),
                java_fixed(_div(mb, fetch_ms / 1000)),
                java_fixed(_div(self.messages, fetch_ms / 1000)),
            ]
        )


def timeout_warning(timeout_ms: int) -> str:
    return (
        f"WARNING: Exiting before consuming the expected number of messages: timeout ({timeout_ms} ms) exceeded. "
        "You can use the --timeout option to increase the timeout."
    )


def progress_line(
    bytes_read: int,
    last_bytes: int,
    messages: int,
    last_messages: int,
    start_ms: int,
    end_ms: int,
    join_ms: int,
    date_format: str,
) -> str:
    """Kafka's `printConsumerProgress` (thread id 0)."""
    elapsed = float(end_ms - start_ms)
    interval_mb = (bytes_read - last_bytes) / MB
    fetch_ms = end_ms - start_ms - join_ms
    fetch_mb_s, fetch_msg_s = (
        (0.0, 0.0) if fetch_ms <= 0 else (1000 * interval_mb / fetch_ms, 1000 * (messages - last_messages) / fetch_ms)
    )
    return ", ".join(
        [
            java_date_format(date_format, end_ms),
            "0",
            java_fixed(bytes_read / MB),
            java_fixed(_div(1000 * interval_mb, elapsed)),
            str(messages),
            java_fixed(_div(messages - last_messages, elapsed) * 1000),
            str(join_ms),
            str(fetch_ms),
            java_fixed(fetch_mb_s),
            java_fixed(fetch_msg_s),
        ]
    )


def consume(
    consumer: GroupPoller,
    settings: PerfSettings,
    emit: Callable[[str], None],
    now_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
) -> PerfResult:
    """Kafka's `consume`: read until `messages` records or `timeout_ms` without one."""
    start = now_ms()
    messages = bytes_read = last_messages = last_bytes = 0
    last_report = last_consumed = current = start
    joined_reported = 0.0
    while messages < settings.messages and current - last_consumed <= settings.timeout_ms:
        records = consumer.poll(POLL_MS)
        current = now_ms()
        if records:
            last_consumed = current
        for record in records:
            messages += 1
            bytes_read += len(record.key or b"") + len(record.value or b"")
            if current - last_report >= settings.reporting_interval_ms:
                if settings.detailed:
                    join_ms = int(consumer.join_time_ms - joined_reported)
                    emit(
                        progress_line(
                            bytes_read, last_bytes, messages, last_messages, last_report, current, join_ms,
                            settings.date_format,
                        )
                    )  # fmt: skip
                joined_reported = consumer.join_time_ms
                last_report, last_messages, last_bytes = current, messages, bytes_read
    timed_out = messages < settings.messages
    if timed_out:
        emit(timeout_warning(settings.timeout_ms))
    return PerfResult(start, now_ms(), messages, bytes_read, int(consumer.join_time_ms), timed_out)

"""kafka-consumer-perf-test's loop and texts without a broker: the header, Kafka's `%.4f` columns with
Java's Infinity/NaN, SimpleDateFormat's letters, the stop at --messages or --timeout, the detailed lines."""

from __future__ import annotations

import datetime as dt

from kafkaops.admin import consumer_perf as perf
from kafkaops.admin.kafka_client.records import ConsumerRecord, TimestampType


def record(size: int) -> ConsumerRecord:
    return ConsumerRecord("t", 0, 0, 0, TimestampType.CREATE_TIME, b"k", b"v" * (size - 1))


class Poller:
    """Hands out batches, one per poll, advancing the clock 100 ms per poll."""

    def __init__(self, batches: list[list[ConsumerRecord]], clock: list[int]) -> None:
        self.batches, self.clock = batches, clock
        self.join_time_ms = 0.0

    def poll(self, timeout_ms: int) -> list[ConsumerRecord]:
        self.clock[0] += timeout_ms
        if self.join_time_ms == 0:
            self.join_time_ms = 40.0
        return self.batches.pop(0) if self.batches else []


def test_header_as_kafka() -> None:
    assert perf.header(False) == (
        "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, "
        "fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
    )
    assert perf.header(True).startswith("time, threadId, data.consumed.in.MB")


def test_java_fixed_and_date_format() -> None:
    assert perf.java_fixed(1 / 3) == "0.3333"
    assert perf.java_fixed(float("inf")) == "Infinity" and perf.java_fixed(float("nan")) == "NaN"
    epoch_ms = int(dt.datetime(2021, 3, 4, 5, 6, 7, 89000).timestamp() * 1000)
    assert perf.java_date_format(perf.DEFAULT_DATE_FORMAT, epoch_ms) == "2021-03-04 05:06:07:089"
    assert perf.java_date_format("yy/M/d 'at' H", epoch_ms) == "21/3/4 at 5"


def test_consume_stops_at_messages_and_sums_bytes() -> None:
    clock = [1_000_000]
    poller = Poller([[record(10)] * 3, [record(10)] * 3], clock)
    lines: list[str] = []
    result = perf.consume(poller, perf.PerfSettings(messages=5), lines.append, lambda: clock[0])
    assert (result.messages, result.bytes, result.timed_out, result.join_time_ms) == (6, 60, False, 40)
    assert lines == []
    columns = result.summary().split(", ")
    assert len(columns) == 10 and columns[4] == "6" and columns[6] == "40" and columns[7] == "160"


def test_consume_times_out_with_kafkas_warning() -> None:
    clock = [0]
    lines: list[str] = []
    result = perf.consume(
        Poller([[record(4)]], clock), perf.PerfSettings(messages=5, timeout_ms=300), lines.append, lambda: clock[0]
    )
    assert result.timed_out and result.messages == 1
    assert lines == [perf.timeout_warning(300)]
    assert "timeout (300 ms) exceeded. You can use the --timeout option" in lines[0]


def test_detailed_stats_print_a_line_per_interval() -> None:
    clock = [0]
    settings = perf.PerfSettings(messages=4, reporting_interval_ms=100, detailed=True, date_format="S")
    lines: list[str] = []
    perf.consume(
        Poller([[record(2)], [record(2)], [record(2)], [record(2)]], clock), settings, lines.append, lambda: clock[0]
    )
    assert len(lines) == 4
    assert lines[0].split(", ")[1:3] == ["0", "0.0000"]
    assert lines[1].split(", ")[4] == "2"

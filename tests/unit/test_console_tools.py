"""The console tools' library without a broker: Kafka's LineMessageReader and the reading of input lines in
batches, DefaultMessageFormatter, ConsoleConsumer's option checks and its process loop, and the console
producer's send loop."""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from typing import Any

import pytest

from kafkaops.admin.console import (
    ConsoleConsumer,
    DefaultMessageFormatter,
    LineMessageReader,
    SentLines,
    StopReason,
    consumer_settings,
    parse_key_value_args,
    read_line_batches,
    send_lines,
)
from kafkaops.admin.kafka_client import ConsumerRecord, ProducerRecordTuple, SendOutcome, TimestampType
from kafkaops.cluster.common.errors import (
    InvalidArgumentError,
    NotEnoughReplicasError,
    UnknownTopicOrPartitionError,
    UsageError,
)

# --- console-producer: reading lines ----------------------------------------------------------------------


def test_line_reader_defaults_take_the_whole_line_as_value() -> None:
    assert LineMessageReader().read("a\tb", 1) == (None, b"a\tb", None)


def test_line_reader_parse_key() -> None:
    reader = LineMessageReader.from_properties({"parse.key": "true", "key.separator": ":"})
    assert reader.read("k:v:w", 1) == (b"k", b"v:w", None)
    assert reader.read("k:", 2) == (b"k", b"", None)
    with pytest.raises(InvalidArgumentError, match="^No key found on line 3: novalue$"):
        reader.read("novalue", 3)
    lenient = LineMessageReader.from_properties({"parse.key": " TRUE ", "ignore.error": "true"})
    assert lenient.read("novalue", 1) == (None, b"novalue", None)


def test_line_reader_headers_and_null_marker() -> None:
    reader = LineMessageReader.from_properties({"parse.headers": "true", "parse.key": "true", "null.marker": "NULL"})
    assert reader.read("h1:v1,h2:NULL\tk\tv", 1) == (b"k", b"v", (("h1", b"v1"), ("h2", None)))
    assert reader.read("NULL\tNULL\tNULL", 2) == (None, None, None)
    with pytest.raises(InvalidArgumentError, match="No header key separator found in pair 'bad' on line number 3"):
        reader.read("bad\tk\tv", 3)
    with pytest.raises(InvalidArgumentError, match="^null.marker and key.separator may not be equal$"):
        LineMessageReader.from_properties({"null.marker": "\t"})


def test_line_batches_from_a_stream_without_a_descriptor() -> None:
    stream = io.BytesIO(b"one\r\ntwo\nthree\nfour")
    assert list(read_line_batches(stream, 1.0, max_bytes=7)) == [["one", "two", "three"], ["four"]]
    assert list(read_line_batches(io.BytesIO(b"a\nb\n"), 1.0, 100, sync=True)) == [["a"], ["b"]]
    assert list(read_line_batches(io.BytesIO(b""), 1.0, 100)) == []


def test_line_batches_from_a_pipe_close_on_linger() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb", buffering=0) as stream:
        batches = read_line_batches(stream, 0.05, max_bytes=1000)
        os.write(write_end, b"a\nb\n")
        assert next(batches) == ["a", "b"]  # closed by the linger: the writer is still open
        os.write(write_end, b"c\nlast without newline")
        os.close(write_end)
        assert list(batches) == [["c", "last without newline"]]


# --- console-consumer: options and the formatter ----------------------------------------------------------


def record(**overrides: Any) -> ConsumerRecord:
    values: dict[str, Any] = {
        "topic": "t",
        "partition": 1,
        "offset": 7,
        "timestamp": 1234,
        "timestamp_type": TimestampType.CREATE_TIME,
        "key": b"k",
        "value": b"v",
        "headers": (),
    }
    values.update(overrides)
    return ConsumerRecord(**values)


def test_formatter_default_prints_values() -> None:
    assert DefaultMessageFormatter().format(record()) == b"v\n"
    assert DefaultMessageFormatter().format(record(value=None)) == b"null\n"


def test_formatter_every_column_in_kafka_order() -> None:
    formatter = DefaultMessageFormatter.from_properties(
        parse_key_value_args(
            [
                "print.timestamp=true",
                "print.key=true",
                "print.offset=true",
                "print.partition=true",
                "print.headers=true",
                "key.separator=|",
            ]
        )
    )
    assert formatter.format(record()) == b"CreateTime:1234|Partition:1|Offset:7|NO_HEADERS|k|v\n"
    assert formatter.format(record(headers=(("a", b"1"), ("b", None)), key=None)) == (
        b"CreateTime:1234|Partition:1|Offset:7|a:1,b:null|null|v\n"
    )


def test_formatter_without_value_ends_the_line_after_the_last_column() -> None:
    formatter = DefaultMessageFormatter.from_properties({"print.key": "true", "print.value": "false"})
    assert formatter.format(record()) == b"k\n"


def test_key_value_args() -> None:
    assert parse_key_value_args(["a=b=c", "d", "e="]) == {"a": "b=c", "d": "", "e": ""}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((None, None, None, False), "Exactly one of whitelist/topic is required."),
        (("t", None, "3", False), "The partition is required when offset is specified."),
        (("t", 0, "3", True), "Options from-beginning and offset cannot be specified together."),
        (
            ("t", 0, "-3", False),
            "The provided offset value '-3' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long.",
        ),
        (("t", 0, "x", False), "The provided offset value 'x' is incorrect."),
    ],
)
def test_consumer_option_errors(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(UsageError) as raised:
        consumer_settings(*args, None, None)
    assert str(raised.value).startswith(message)


def test_consumer_start_offsets() -> None:
    assert consumer_settings("t", None, None, True, None, None).start == -2
    assert consumer_settings("t", None, None, False, 5, 100).start == -1
    assert consumer_settings("t", 0, "EARLIEST", False, None, None).start == -2
    assert consumer_settings("t", 0, "latest", False, None, None).start == -1
    settings = consumer_settings("t", 0, "42", False, 3, 200)
    assert (settings.start, settings.max_messages, settings.timeout_ms) == (42, 3, 200)


# --- console-consumer: the process loop -----------------------------------------------------------------------


class FakeConsumer:
    """Answers polls from a script of batches (an exception is raised); each poll takes its whole timeout
    when nothing comes."""

    def __init__(self, script: list[list[ConsumerRecord] | Exception]) -> None:
        self.script = script
        self.now = 0.0
        self.polls: list[int] = []

    def clock(self) -> float:
        return self.now

    def poll(self, timeout_ms: int) -> list[ConsumerRecord]:
        self.polls.append(timeout_ms)
        step = self.script.pop(0) if self.script else []
        if isinstance(step, Exception):
            raise step
        if not step:
            self.now += timeout_ms / 1000
        return list(step)


class CountingStream(io.BytesIO):
    def __init__(self) -> None:
        super().__init__()
        self.flushed_at: list[int] = []

    def flush(self) -> None:
        self.flushed_at.append(len(self.getvalue()))


def test_process_stops_after_max_messages_and_flushes_after_each_poll() -> None:
    fake = FakeConsumer([[record(offset=1), record(offset=2)], [], [record(offset=3), record(offset=4)]])
    formatter = DefaultMessageFormatter(print_offset=True, print_value=False)
    console = ConsoleConsumer(fake, formatter, max_messages=3, clock=fake.clock)
    out = CountingStream()
    assert console.process(out) is StopReason.MAX_MESSAGES
    assert out.getvalue() == b"Offset:1\nOffset:2\nOffset:3\n"
    assert console.message_count == 3
    assert out.flushed_at == [18, 27]  # after the first poll's records, then on the way out
    assert fake.polls == [1000, 1000, 1000]


def test_process_times_out_when_no_record_comes_within_timeout_ms() -> None:
    fake = FakeConsumer([[record()], [], [], []])
    console = ConsoleConsumer(fake, DefaultMessageFormatter(), timeout_ms=2500, clock=fake.clock)
    out = io.BytesIO()
    assert console.process(out) is StopReason.TIMEOUT
    assert (out.getvalue(), console.message_count) == (b"v\n", 1)
    assert fake.polls == [1000, 1000, 1000, 500]  # what is left of the timeout since the last record


def test_process_raises_the_consumers_error_and_keeps_the_count() -> None:
    fake = FakeConsumer([[record()], UnknownTopicOrPartitionError("gone")])
    console = ConsoleConsumer(fake, DefaultMessageFormatter(), clock=fake.clock)
    out = CountingStream()
    with pytest.raises(UnknownTopicOrPartitionError):
        console.process(out)
    assert (out.getvalue(), console.message_count, out.flushed_at) == (b"v\n", 1, [2, 2])


# --- console-producer: the send loop ---------------------------------------------------------------------------


class FakeSender:
    def __init__(self, refuse: bytes | None = None) -> None:
        self.refuse = refuse
        self.sent: list[list[ProducerRecordTuple]] = []

    def send(self, records: Sequence[ProducerRecordTuple]) -> list[SendOutcome]:
        self.sent.append(list(records))
        error = NotEnoughReplicasError("few") if any(r[1] == self.refuse for r in records) else None
        return [SendOutcome(0, list(records), -1 if error else 0, error)]


def test_send_lines_sends_each_batch_and_reports_failures() -> None:
    sender = FakeSender(refuse=b"bad")
    results = list(send_lines(sender, LineMessageReader(), [["a", "b"], ["bad"]]))
    assert sender.sent == [[(None, b"a", None), (None, b"b", None)], [(None, b"bad", None)]]
    assert [len(r.failed) for r in results] == [0, 1] and all(r.error is None for r in results)


def test_send_lines_stops_at_a_line_the_reader_refuses_after_sending_the_lines_before_it() -> None:
    sender = FakeSender()
    reader = LineMessageReader.from_properties({"parse.key": "true"})
    results = list(send_lines(sender, reader, [["k\ta"], ["k\tb", "nokey", "k\tc"], ["k\td"]]))
    assert sender.sent == [[(b"k", b"a", None)], [(b"k", b"b", None)]]
    assert len(results) == 2 and results[0] == SentLines(results[0].outcomes)
    assert str(results[1].error) == "No key found on line 3: nokey"


def test_send_lines_does_not_send_an_empty_batch() -> None:
    sender = FakeSender()
    reader = LineMessageReader.from_properties({"parse.key": "true"})
    (result,) = send_lines(sender, reader, [["nokey"]])
    assert sender.sent == [] and result.outcomes == [] and isinstance(result.error, InvalidArgumentError)

"""Kafka's `LineMessageReader` (console-producer's `--property` settings and its line format) and the
reading of the input stream in batches, as the console producer's linger and batch size close them."""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import BinaryIO

from kafkaops.admin.console.properties import bool_property
from kafkaops.admin.kafka_client import ProducerRecordTuple
from kafkaops.cluster.common.errors import InvalidArgumentError


@dataclass(frozen=True)
class LineMessageReader:
    """Kafka's `LineMessageReader` settings: `parse.key`, `key.separator`, `ignore.error`, and (Kafka 3.2+)
    `parse.headers`, `headers.delimiter`, `headers.separator`, `headers.key.separator`, `null.marker`."""

    parse_key: bool = False
    key_separator: str = "\t"
    ignore_error: bool = False
    parse_headers: bool = False
    headers_delimiter: str = "\t"
    headers_separator: str = ","
    headers_key_separator: str = ":"
    null_marker: str | None = None

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> LineMessageReader:
        """Raises InvalidArgumentError with Kafka's texts for separators that collide."""
        reader = cls(
            parse_key=bool_property(props, "parse.key", False),
            key_separator=props.get("key.separator", "\t"),
            ignore_error=bool_property(props, "ignore.error", False),
            parse_headers=bool_property(props, "parse.headers", False),
            headers_delimiter=props.get("headers.delimiter", "\t"),
            headers_separator=props.get("headers.separator", ","),
            headers_key_separator=props.get("headers.key.separator", ":"),
            null_marker=props.get("null.marker"),
        )
        pairs = [
            ("headers.delimiter", reader.headers_delimiter, "headers.separator", reader.headers_separator),
            ("headers.delimiter", reader.headers_delimiter, "headers.key.separator", reader.headers_key_separator),
            ("headers.separator", reader.headers_separator, "headers.key.separator", reader.headers_key_separator),
            ("null.marker", reader.null_marker, "key.separator", reader.key_separator),
            ("null.marker", reader.null_marker, "headers.separator", reader.headers_separator),
            ("null.marker", reader.null_marker, "headers.delimiter", reader.headers_delimiter),
            ("null.marker", reader.null_marker, "headers.key.separator", reader.headers_key_separator),
        ]
        for a, a_value, b, b_value in pairs:
            if a_value is not None and a_value == b_value:
                raise InvalidArgumentError(f"{a} and {b} may not be equal")
        if reader.parse_key and not reader.key_separator:
            raise InvalidArgumentError("key.separator may not be empty")
        return reader

    def _part(self, enabled: bool, line: str, start: int, separator: str, name: str, number: int) -> str | None:
        if not enabled:
            return None
        index = line.find(separator, start)
        if index < 0:
            if self.ignore_error:
                return None
            if name == "key separator":
                raise InvalidArgumentError(f"No key found on line {number}: {line}")  # Kafka 2.8's text
            raise InvalidArgumentError(f"No {name} found on line number {number}: '{line}'")
        return line[start:index]

    def _null(self, text: str | None) -> bytes | None:
        return None if text is None or text == self.null_marker else text.encode()

    def read(self, line: str, number: int) -> ProducerRecordTuple:
        """One line (without its terminator) as (key, value, headers); `number` counts from 1 for errors."""
        headers_text = self._part(self.parse_headers, line, 0, self.headers_delimiter, "headers delimiter", number)
        header_end = 0 if headers_text is None else len(headers_text) + len(self.headers_delimiter)
        key_text = self._part(self.parse_key, line, header_end, self.key_separator, "key separator", number)
        key_end = 0 if key_text is None else len(key_text) + len(self.key_separator)
        value = line[header_end + key_end :]
        headers: list[tuple[str, bytes | None]] = []
        if headers_text is not None and headers_text != self.null_marker:
            for pair in headers_text.split(self.headers_separator):
                index = pair.find(self.headers_key_separator)
                if index < 0:
                    if not self.ignore_error:
                        raise InvalidArgumentError(
                            f"No header key separator found in pair '{pair}' on line number {number}"
                        )
                    headers.append((pair, None))
                    continue
                header_key = pair[:index]
                if header_key == self.null_marker:
                    raise InvalidArgumentError(
                        f"Header keys should not be equal to the null marker '{self.null_marker}' as they can't be null"
                    )
                headers.append((header_key, self._null(pair[index + len(self.headers_key_separator) :])))
        return self._null(key_text), self._null(value), tuple(headers) or None


def read_line_batches(
    stream: BinaryIO,
    linger_s: float,
    max_bytes: int,
    *,
    sync: bool = False,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[list[str]]:
    """Lines of `stream` (UTF-8, `\\n` or `\\r\\n` ended; a last line without one counts) in batches.

    A batch closes when it holds `max_bytes`, `linger_s` after its first line (Kafka's linger.ms, the
    console producer's `--timeout`), or at the end of input; with `sync`, every line is its own batch.
    On a pipe or terminal the linger is real time (select on the descriptor); a stream without one is
    read to the end in batches of `max_bytes`.
    """
    try:
        fd: int | None = stream.fileno()
    except (OSError, ValueError, AttributeError):
        fd = None
    if fd is None:
        raw_lines = stream.read().split(b"\n")
        if raw_lines[-1] == b"":
            raw_lines.pop()
        yield from _batches(iter([_decode(line) for line in raw_lines]), max_bytes, sync)
        return
    buffer = b""
    eof = False
    while not eof:
        batch: list[str] = []
        size = 0
        deadline: float | None = None
        while True:
            while b"\n" in buffer and size < max_bytes and not (sync and batch):
                raw, buffer = buffer.split(b"\n", 1)
                batch.append(_decode(raw))
                size += len(raw)
                if deadline is None:
                    deadline = clock() + linger_s
            if size >= max_bytes or (sync and batch):
                break
            wait = None if deadline is None else deadline - clock()
            if wait is not None and wait <= 0:
                break
            if not select.select([fd], [], [], wait)[0]:
                break
            chunk = os.read(fd, 65536)
            if not chunk:
                eof = True
                if buffer:
                    batch.append(_decode(buffer))
                    buffer = b""
                break
            buffer += chunk
        if batch:
            yield batch


def _decode(raw: bytes) -> str:
    return raw.removesuffix(b"\r").decode("utf-8", errors="replace")


def _batches(lines: Iterator[str], max_bytes: int, sync: bool) -> Iterator[list[str]]:
    batch: list[str] = []
    size = 0
    for line in lines:
        batch.append(line)
        size += len(line.encode())
        if sync or size >= max_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch

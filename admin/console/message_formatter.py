"""Kafka's `DefaultMessageFormatter`: what console-consumer writes for a record, and its `--property`
settings (print.timestamp, print.key, print.offset, print.partition, print.headers, print.value,
key.separator, line.separator, headers.separator, null.literal)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafkaops.admin.console.properties import bool_property
from kafkaops.admin.kafka_client import ConsumerRecord


@dataclass(frozen=True)
class DefaultMessageFormatter:
    """Kafka's `DefaultMessageFormatter` and its `--property` settings."""

    print_timestamp: bool = False
    print_key: bool = False
    print_offset: bool = False
    print_partition: bool = False
    print_headers: bool = False
    print_value: bool = True
    key_separator: bytes = b"\t"
    line_separator: bytes = b"\n"
    headers_separator: bytes = b","
    null_literal: bytes = b"null"

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> DefaultMessageFormatter:
        def separator(name: str, default: bytes) -> bytes:
            return props[name].encode() if name in props else default

        return cls(
            print_timestamp=bool_property(props, "print.timestamp", False),
            print_key=bool_property(props, "print.key", False),
            print_offset=bool_property(props, "print.offset", False),
            print_partition=bool_property(props, "print.partition", False),
            print_headers=bool_property(props, "print.headers", False),
            print_value=bool_property(props, "print.value", True),
            key_separator=separator("key.separator", b"\t"),
            line_separator=separator("line.separator", b"\n"),
            headers_separator=separator("headers.separator", b","),
            null_literal=separator("null.literal", b"null"),
        )

    def format(self, record: ConsumerRecord) -> bytes:
        """The bytes `DefaultMessageFormatter.writeTo` writes: the chosen columns, each followed by the key
        separator if another column follows and by the line separator otherwise."""
        columns: list[bytes] = []
        if self.print_timestamp:
            columns.append(f"{record.timestamp_type}:{record.timestamp}".encode())
        if self.print_partition:
            columns.append(b"Partition:%d" % record.partition)
        if self.print_offset:
            columns.append(b"Offset:%d" % record.offset)
        if self.print_headers:
            if record.headers:
                columns.append(
                    self.headers_separator.join(
                        k.encode() + b":" + (self.null_literal if v is None else v) for k, v in record.headers
                    )
                )
            else:
                columns.append(b"NO_HEADERS")
        if self.print_key:
            columns.append(self.null_literal if record.key is None else record.key)
        if self.print_value:
            columns.append(self.null_literal if record.value is None else record.value)
        if not columns:
            return b""
        return self.key_separator.join(columns) + self.line_separator

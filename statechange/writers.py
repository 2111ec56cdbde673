"""Writing merged entries: the original bytes (default), or JSON lines.

JSON output is one object per entry per line (JSON Lines), not one document: a merge can be larger than
memory and is consumed as a stream (`jq -c`, `spark.read.json`). The record's fields, in this order, are
the same from both engines (`RECORD_FIELDS`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, BinaryIO

from kafkaops.statechange.model import Entry, RawEntry
from kafkaops.statechange.parse import parse_entry

RECORD_FIELDS = (
    "timestamp",
    "level",
    "actor",
    "actor_id",
    "controller_epoch",
    "partitions",
    "message",
    "continuation",
    "source",
    "line",
)


def write_text(batch: Sequence[bytes], out: BinaryIO) -> None:
    """Entry texts as merged, byte for byte (line endings included); one write per batch."""
    if batch:
        out.write(b"\n".join(batch))
        out.write(b"\n")


def write_annotated(batch: Sequence[RawEntry], out: BinaryIO) -> None:
    """Like write_text, each line prefixed with `<source>:<line number>: ` (beyond Kafka: --annotate)."""
    write = out.write
    for entry in batch:
        prefix = entry.source.encode("utf-8", "surrogateescape")
        for offset, line in enumerate(entry.text.split(b"\n")):
            write(b"%s:%d: %s\n" % (prefix, entry.line + offset, line))


def json_record(entry: Entry) -> dict[str, Any]:
    record = {name: getattr(entry, name) for name in RECORD_FIELDS}
    record["partitions"] = [{"topic": p.topic, "partition": p.partition} for p in entry.partitions]
    record["continuation"] = list(entry.continuation)
    return record


def write_json_lines(batch: Sequence[RawEntry], out: BinaryIO) -> None:
    out.write(
        "".join(
            json.dumps(json_record(parse_entry(entry)), ensure_ascii=False, separators=(",", ":")) + "\n"
            for entry in batch
        ).encode("utf-8", "surrogateescape")
    )

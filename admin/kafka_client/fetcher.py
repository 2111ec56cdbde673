"""Fetch requests and answers: Kafka's consumer `Fetcher`, without its sessions and its prefetching.

A Fetch answer is read in ONE place, `fetch_response_partitions`: each requested partition's entry or
its error (the answer's top-level error, the partition's error code, or a partition the answer left
out). On top of it, `fetch_results` decodes the records a consumer reads and `raw_fetch_results` keeps
the batches as they came, for tools that compare replicas batch by batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkaops.admin.kafka_client.records import ConsumerRecord, TimestampType
from kafkaops.cluster.common.errors import BrokerError, MessageTooLargeError, NetworkExceptionError, from_code
from kafkaops.cluster.protocol.records import iter_batches, iter_records
from kafkaops.cluster.zk.values import TopicPartition

CONSUMER_REPLICA_ID = -1
DEBUGGING_REPLICA_ID = -2
"""Kafka's `FetchRequest.DEBUGGING_CONSUMER_ID`: any replica answers, not only the leader."""
READ_UNCOMMITTED = 0
READ_COMMITTED = 1

DEFAULT_MAX_BYTES = 52_428_800
"""Kafka's consumer `fetch.max.bytes`."""
DEFAULT_PARTITION_MAX_BYTES = 1_048_576
"""Kafka's consumer `max.partition.fetch.bytes`."""
DEFAULT_MAX_WAIT_MS = 500
"""Kafka's consumer `fetch.max.wait.ms`."""


@dataclass(frozen=True, slots=True)
class FetchResult:
    """One partition's Fetch answer: its records from the requested offset on, and where to go next.

    `next_offset` is past the last complete batch returned (control batches included), or the requested
    offset when nothing came back.
    """

    topic: str
    partition: int
    records: tuple[ConsumerRecord, ...]
    next_offset: int
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int


@dataclass(frozen=True, slots=True)
class RawFetchResult:
    """One partition's Fetch answer with its RECORDS bytes as they came (whole batches from the one that
    contains the fetch offset, perhaps a truncated batch at the end), for tools that compare batches
    instead of reading records (replica verification)."""

    topic: str
    partition: int
    records: bytes
    high_watermark: int
    log_start_offset: int


def decode_records(
    topic: str, partition: int, data: bytes | memoryview, fetch_offset: int
) -> tuple[list[ConsumerRecord], int]:
    """The records of a Fetch answer's RECORDS bytes at or after `fetch_offset`, and the next offset to fetch.

    A broker returns whole batches starting with the one that *contains* the fetch offset, so the first
    records may lie before it and are skipped; a size-limited answer may end in a truncated batch, which
    is ignored (the next fetch starts at it). Control batches (transaction markers) are skipped but
    moved past. Raises CorruptMessageError for a bad CRC or malformed bytes,
    UnsupportedCompressionTypeError for snappy/lz4/zstd batches, and MessageTooLargeError when bytes came
    back but not one whole batch (the fetch size is below the batch size; brokers before KIP-74).
    """
    records: list[ConsumerRecord] = []
    next_offset = fetch_offset
    whole_batches = 0
    for batch in iter_batches(data, allow_truncated_tail=True):
        whole_batches += 1
        header = batch.header
        if header.next_offset <= fetch_offset:
            continue
        next_offset = max(next_offset, header.next_offset)
        if header.is_control:
            continue
        timestamp_type = TimestampType.LOG_APPEND_TIME if header.log_append_time else TimestampType.CREATE_TIME
        for record in iter_records(batch):
            if record.offset < fetch_offset:
                continue
            records.append(
                ConsumerRecord(
                    topic,
                    partition,
                    record.offset,
                    record.timestamp,
                    timestamp_type,
                    record.key,
                    record.value,
                    record.headers,
                    header.partition_leader_epoch,
                )
            )
    if len(data) > 0 and whole_batches == 0:
        raise MessageTooLargeError(
            f"There are some messages at [Partition=Offset]: {{{topic}-{partition}={fetch_offset}}} whose size is "
            f"larger than the fetch size {len(data)} and hence cannot be returned. Increase the fetch size on the "
            "client (using max.partition.fetch.bytes)"
        )
    return records, next_offset


def fetch_request_body(
    partitions: Mapping[TopicPartition, int],
    max_wait_ms: int,
    max_bytes: int,
    partition_max_bytes: int,
    replica_id: int,
    isolation_level: int,
    min_bytes: int,
) -> dict[str, Any]:
    """A sessionless Fetch of `partitions` from their offsets (every field of the newest version we
    speak; older versions leave out what they do not have)."""
    topics: dict[str, list[dict[str, Any]]] = {}
    for tp, offset in partitions.items():
        topics.setdefault(tp.topic, []).append(
            {
                "partition": tp.partition,
                "current_leader_epoch": -1,
                "fetch_offset": offset,
                "log_start_offset": -1,
                "partition_max_bytes": partition_max_bytes,
            }
        )
    return {
        "replica_id": replica_id,
        "max_wait_ms": max_wait_ms,
        "min_bytes": min_bytes,
        "max_bytes": max_bytes,
        "isolation_level": isolation_level,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
        "forgotten_topics_data": [],
        "rack_id": "",
    }


def fetch_response_partitions(
    response: Mapping[str, Any], requested: Iterable[TopicPartition]
) -> dict[TopicPartition, Mapping[str, Any] | BrokerError]:
    """Each requested partition's entry in a Fetch answer, or its error: the answer's top-level error for
    all of them, the partition's own error code, or NetworkExceptionError for a partition the answer does
    not mention. Partitions the answer names but nobody asked for are dropped."""
    wanted = list(requested)
    if response.get("error_code"):
        return dict.fromkeys(wanted, from_code(response["error_code"]))
    asked = set(wanted)
    entries: dict[TopicPartition, Mapping[str, Any] | BrokerError] = {}
    for topic in response["responses"]:
        for p in topic["partition_responses"]:
            tp = TopicPartition(topic["topic"], p["partition"])
            if tp in asked:
                entries[tp] = from_code(p["error_code"]) if p["error_code"] else p
    for tp in wanted:
        entries.setdefault(tp, NetworkExceptionError(f"The Fetch answer did not mention {tp}"))
    return entries


def fetch_results(
    response: Mapping[str, Any], requested: Mapping[TopicPartition, int]
) -> dict[TopicPartition, FetchResult | BrokerError]:
    """A Fetch answer's records per partition from the offsets in `requested`, or the partition's error
    (a record batch that cannot be decoded is that partition's error too)."""
    return {
        tp: entry if isinstance(entry, BrokerError) else _fetch_result(tp, entry, requested[tp])
        for tp, entry in fetch_response_partitions(response, requested).items()
    }


def _fetch_result(tp: TopicPartition, entry: Mapping[str, Any], offset: int) -> FetchResult | BrokerError:
    try:
        records, next_offset = decode_records(tp.topic, tp.partition, entry["record_set"] or b"", offset)
    except BrokerError as error:
        return error
    return FetchResult(
        tp.topic,
        tp.partition,
        tuple(records),
        next_offset,
        entry["high_watermark"],
        entry["last_stable_offset"],
        entry["log_start_offset"],
    )


def raw_fetch_results(
    response: Mapping[str, Any], requested: Iterable[TopicPartition]
) -> dict[TopicPartition, RawFetchResult | BrokerError]:
    """A Fetch answer's batches per partition, undecoded, or the partition's error."""
    return {
        tp: entry
        if isinstance(entry, BrokerError)
        else RawFetchResult(
            tp.topic,
            tp.partition,
            bytes(entry["record_set"] or b""),
            entry["high_watermark"],
            entry["log_start_offset"],
        )
        for tp, entry in fetch_response_partitions(response, requested).items()
    }

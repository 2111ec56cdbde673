"""A small blocking Kafka client on our own protocol codec: metadata, produce, fetch, list offsets.

What the console tools (`kafkaops console-producer`, `console-consumer`, `producer-perf-test`) and
replica verification need from a broker, and nothing more: no consumer groups, no idempotence, no
transactions, no compression beyond gzip. It speaks to any broker that serves the versions of
kafka-protocol.md §1 (ours, or Apache Kafka 2.1+), over plain blocking sockets. Everything the broker
refuses is raised as the protocol room's error for Kafka's code (`kafkaops.cluster.protocol.errors`),
with Kafka's own text.

    connection    BrokerConnection: one socket per broker, versions negotiated (Kafka's NetworkClient)
    metadata      brokers, topics, partitions as a Metadata answer gives them (Kafka's Cluster)
    client        KafkaClient: the metadata cache, the retry loop, produce/fetch/list offsets
    records       ConsumerRecord, TimestampType, what a producer sends per record
    fetcher       Fetch requests, and the ONE reader of Fetch answers (decoded or raw batches)
    partitioner   murmur2, the default partitioner, the sticky partitioner (KIP-480)
    producer      the acks setting, BatchSender (records spread over partitions, one batch each)
    consumer      PartitionConsumer (assign-style, no group), auto.offset.reset, isolation.level
    perf          kafka-producer-perf-test's arithmetic: Stats, ThroughputThrottler, the send loop

Everything below the client that is pure (decoding, partitioners, perf arithmetic) is tested without a
broker. Clocks, sleeps and randomness are injected (`clock` in seconds, monotonic; `wall_clock_ms` for
record timestamps; `sleep`; `random.Random`), so tests drive them.
"""

from kafkaops.admin.kafka_client.client import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    EpochEndOffset,
    KafkaClient,
    OffsetAndTimestamp,
)
from kafkaops.admin.kafka_client.connection import parse_bootstrap_servers
from kafkaops.admin.kafka_client.consumer import OffsetResetPolicy, PartitionConsumer, parse_isolation_level
from kafkaops.admin.kafka_client.fetcher import (
    CONSUMER_REPLICA_ID,
    DEBUGGING_REPLICA_ID,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_WAIT_MS,
    DEFAULT_PARTITION_MAX_BYTES,
    READ_COMMITTED,
    READ_UNCOMMITTED,
    FetchResult,
    RawFetchResult,
    decode_records,
)
from kafkaops.admin.kafka_client.metadata import BrokerNode, ClusterMetadata, PartitionInfo, TopicInfo
from kafkaops.admin.kafka_client.partitioner import StickyPartitioner, murmur2, partition_for_key
from kafkaops.admin.kafka_client.perf import (
    PerfStats,
    PerfTotal,
    PerfWindow,
    ThroughputThrottler,
    payloads_from_text,
    perf_payload,
    run_producer_perf,
)
from kafkaops.admin.kafka_client.producer import BatchSender, SendOutcome, parse_acks
from kafkaops.admin.kafka_client.records import ConsumerRecord, ProducerRecordTuple, TimestampType

__all__ = [
    "CONSUMER_REPLICA_ID",
    "DEBUGGING_REPLICA_ID",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_WAIT_MS",
    "DEFAULT_PARTITION_MAX_BYTES",
    "EARLIEST_TIMESTAMP",
    "LATEST_TIMESTAMP",
    "READ_COMMITTED",
    "READ_UNCOMMITTED",
    "BatchSender",
    "BrokerNode",
    "ClusterMetadata",
    "ConsumerRecord",
    "EpochEndOffset",
    "FetchResult",
    "KafkaClient",
    "OffsetAndTimestamp",
    "OffsetResetPolicy",
    "PartitionConsumer",
    "PartitionInfo",
    "PerfStats",
    "PerfTotal",
    "PerfWindow",
    "ProducerRecordTuple",
    "RawFetchResult",
    "SendOutcome",
    "StickyPartitioner",
    "ThroughputThrottler",
    "TimestampType",
    "TopicInfo",
    "decode_records",
    "murmur2",
    "parse_acks",
    "parse_bootstrap_servers",
    "parse_isolation_level",
    "partition_for_key",
    "payloads_from_text",
    "perf_payload",
    "run_producer_perf",
]

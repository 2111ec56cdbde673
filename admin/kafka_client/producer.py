"""Producing many records: Kafka's `acks` setting and a sender that spreads records over partitions as
Kafka's producer does, one batch per partition per call."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.kafka_client.partitioner import StickyPartitioner, partition_for_key
from kafkaops.admin.kafka_client.records import ProducerRecordTuple
from kafkaops.cluster.common.errors import BrokerError, InvalidArgumentError
from kafkaops.cluster.protocol.records import Compression


def parse_acks(value: str | int) -> int:
    """Kafka's `acks` setting: "all" or -1, 0, 1. Raises InvalidArgumentError with Kafka's ConfigException text."""
    text = str(value).strip()
    if text.lower() == "all":
        return -1
    if text in ("-1", "0", "1"):
        return int(text)
    raise InvalidArgumentError(f"Invalid value {value} for configuration acks: String must be one of: all, -1, 0, 1")


@dataclass
class SendOutcome:
    """What became of some records sent together: their partition, base offset (-1 for acks=0), or error."""

    partition: int
    records: list[ProducerRecordTuple]
    base_offset: int = -1
    error: BrokerError | None = None


class BatchSender:
    """Sends records the way Kafka's producer spreads them: to a fixed partition if one is given, keyed
    records by murmur2 of the key, records without a key to one sticky partition per batch. Each call to
    `send` is one batch per partition involved. Errors are reported per batch, not raised, as the
    producer's callbacks report them."""

    def __init__(
        self,
        client: KafkaClient,
        topic: str,
        *,
        partition: int | None = None,
        acks: int = -1,
        timeout_ms: int | None = None,
        compression: Compression = Compression.NONE,
        rng: random.Random | None = None,
    ) -> None:
        self.client = client
        self.topic = topic
        self.partition = partition
        self.acks = acks
        self.timeout_ms = timeout_ms
        self.compression = compression
        self._sticky = StickyPartitioner(rng or random.Random())
        self._num_partitions: int | None = None

    def num_partitions(self) -> int:
        if self._num_partitions is None:
            self._num_partitions = len(self.client.partitions_for(self.topic))
        return self._num_partitions

    def assign(self, records: Sequence[ProducerRecordTuple]) -> dict[int, list[ProducerRecordTuple]]:
        """Group records by the partition each goes to, keeping their order within a partition."""
        if self.partition is not None:
            return {self.partition: list(records)}
        count = self.num_partitions()
        sticky = self._sticky.new_batch(self.topic, count) if any(r[0] is None for r in records) else -1
        groups: dict[int, list[ProducerRecordTuple]] = {}
        for record in records:
            target = sticky if record[0] is None else partition_for_key(record[0], count)
            groups.setdefault(target, []).append(record)
        return groups

    def send(self, records: Sequence[ProducerRecordTuple]) -> list[SendOutcome]:
        outcomes = []
        for partition, group in self.assign(records).items():
            outcome = SendOutcome(partition, group)
            try:
                outcome.base_offset = self.client.produce(
                    self.topic, partition, group, self.acks, self.timeout_ms, compression=self.compression
                )
            except BrokerError as error:
                outcome.error = error
            outcomes.append(outcome)
        return outcomes

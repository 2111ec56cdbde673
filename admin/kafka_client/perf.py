"""kafka-producer-perf-test's arithmetic: Kafka's `ProducerPerformance` (its payloads, its `Stats` and
their windows and percentiles) and `ThroughputThrottler`, and the send loop on the blocking client."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.kafka_client.producer import BatchSender, SendOutcome
from kafkaops.cluster.common.errors import InvalidArgumentError


def perf_payload(record_size: int, seed: int = 0) -> bytes:
    """The perf test's payload: `record_size` random uppercase letters (Kafka uses `new Random(0)`)."""
    rng = random.Random(seed)
    return bytes(rng.randrange(26) + 65 for _ in range(record_size))


def payloads_from_text(text: str, delimiter: str) -> list[bytes]:
    """`--payload-file`'s payloads: the file's text split at `delimiter`, empty pieces left out."""
    return [p.encode() for p in text.split(delimiter) if p]


class ThroughputThrottler:
    """Kafka's `ThroughputThrottler`: when more than `target` records per second have been sent since
    `start_ms`, sleep 1/target s per record (in steps of at least 2 ms). A negative target never throttles."""

    MIN_SLEEP_S = 0.002

    def __init__(self, target: float, start_ms: int, sleep: Callable[[float], None] = time.sleep) -> None:
        self.target = target
        self.start_ms = start_ms
        self._sleep = sleep
        self._deficit_s = 0.0

    def should_throttle(self, amount_so_far: int, send_start_ms: int) -> bool:
        if self.target < 0:
            return False
        elapsed_s = (send_start_ms - self.start_ms) / 1000
        return elapsed_s > 0 and amount_so_far / elapsed_s > self.target

    def throttle(self) -> None:
        if self.target == 0:
            self._sleep(3600.0)
            return
        self._deficit_s += 1 / self.target
        if self._deficit_s >= self.MIN_SLEEP_S:
            self._sleep(self._deficit_s)
            self._deficit_s = 0.0


@dataclass(frozen=True, slots=True)
class PerfWindow:
    """One reporting window: records, records/s, MB/s, average and maximum latency (ms)."""

    count: int
    records_per_sec: float
    mb_per_sec: float
    avg_latency_ms: float
    max_latency_ms: float


@dataclass(frozen=True, slots=True)
class PerfTotal:
    count: int
    records_per_sec: float
    mb_per_sec: float
    avg_latency_ms: float
    max_latency_ms: float
    p50_ms: int
    p95_ms: int
    p99_ms: int
    p999_ms: int


@dataclass
class PerfStats:
    """Kafka's `ProducerPerformance.Stats`: totals, a sample of latencies (at most ~500,000 of them) for
    the percentiles, and windows of `reporting_interval_ms` handed to `on_window` as they close."""

    num_records: int
    start_ms: int
    reporting_interval_ms: int = 5000
    on_window: Callable[[PerfWindow], None] | None = None
    count: int = 0
    bytes: int = 0
    total_latency: int = 0
    max_latency: int = 0
    window_start_ms: int = 0
    window_count: int = 0
    window_bytes: int = 0
    window_total_latency: int = 0
    window_max_latency: int = 0
    latencies: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sampling = max(self.num_records // max(min(self.num_records, 500_000), 1), 1)
        self.window_start_ms = self.start_ms

    def record(self, iteration: int, latency_ms: int, size: int, now_ms: int) -> None:
        self.count += 1
        self.bytes += size
        self.total_latency += latency_ms
        self.max_latency = max(self.max_latency, latency_ms)
        self.window_count += 1
        self.window_bytes += size
        self.window_total_latency += latency_ms
        self.window_max_latency = max(self.window_max_latency, latency_ms)
        if iteration % self.sampling == 0:
            self.latencies.append(latency_ms)
        if now_ms - self.window_start_ms >= self.reporting_interval_ms:
            if self.on_window is not None:
                self.on_window(self.window(now_ms))
            self.window_start_ms = now_ms
            self.window_count = self.window_bytes = self.window_total_latency = self.window_max_latency = 0

    def window(self, now_ms: int) -> PerfWindow:
        elapsed = max(now_ms - self.window_start_ms, 1)
        return PerfWindow(
            self.window_count,
            1000.0 * self.window_count / elapsed,
            1000.0 * self.window_bytes / elapsed / (1024.0 * 1024.0),
            self.window_total_latency / max(self.window_count, 1),
            float(self.window_max_latency),
        )

    def total(self, now_ms: int) -> PerfTotal:
        elapsed = max(now_ms - self.start_ms, 1)
        ordered = sorted(self.latencies)

        def percentile(p: float) -> int:
            return ordered[int(p * len(ordered))] if ordered else 0

        return PerfTotal(
            self.count,
            1000.0 * self.count / elapsed,
            1000.0 * self.bytes / elapsed / (1024.0 * 1024.0),
            self.total_latency / max(self.count, 1),
            float(self.max_latency),
            percentile(0.5),
            percentile(0.95),
            percentile(0.99),
            percentile(0.999),
        )


def run_producer_perf(
    client: KafkaClient,
    topic: str,
    num_records: int,
    payloads: Sequence[bytes],
    throughput: float,
    *,
    acks: int = -1,
    batch_size: int = 16384,
    timeout_ms: int | None = None,
    on_window: Callable[[PerfWindow], None] | None = None,
    wall_clock_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> tuple[PerfTotal, list[SendOutcome]]:
    """kafka-producer-perf-test's loop on the blocking client: records without keys are gathered into
    batches of up to `batch_size` bytes (one sticky partition per batch, as Kafka's producer does), a
    batch goes out when full, before the throttler sleeps, and at the end; each record's latency is from
    its creation to its batch's answer. Returns the totals and the failed batches (not raised)."""
    if not payloads:
        raise InvalidArgumentError("No payloads to send")
    sender = BatchSender(client, topic, acks=acks, timeout_ms=timeout_ms, rng=rng)
    sender.num_partitions()
    start = wall_clock_ms()
    stats = PerfStats(num_records, start, on_window=on_window)
    throttler = ThroughputThrottler(throughput, start, sleep)
    failed: list[SendOutcome] = []
    pending: list[tuple[int, int, bytes]] = []  # (iteration, created at ms, payload)
    pending_bytes = 0

    def flush() -> None:
        nonlocal pending_bytes
        if not pending:
            return
        outcomes = sender.send([(None, payload, None) for _, _, payload in pending])
        done = wall_clock_ms()
        failed.extend(o for o in outcomes if o.error is not None)
        for iteration, created, payload in pending:
            stats.record(iteration, done - created, len(payload), done)
        pending.clear()
        pending_bytes = 0

    chooser = rng or random.Random()
    for i in range(num_records):
        payload = payloads[0] if len(payloads) == 1 else payloads[chooser.randrange(len(payloads))]
        send_start = wall_clock_ms()
        if pending and pending_bytes + len(payload) > batch_size:
            flush()
        pending.append((i, send_start, payload))
        pending_bytes += len(payload)
        if throttler.should_throttle(i, send_start):
            flush()
            throttler.throttle()
    flush()
    return stats.total(wall_clock_ms()), failed

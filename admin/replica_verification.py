"""kafka-replica-verification (Kafka 2.8 `kafka.tools.ReplicaVerificationTool`, kafka-reference.md §2.6).

Kafka's tool checks that every replica of every selected partition holds the same record batches:

1. one fetcher per broker; each round every fetcher sends one debug Fetch (replica id -2, which any
   replica answers, up to its own high watermark) for all the selected partitions that broker hosts,
   each from the partition's current *verified offset*;
2. when every fetcher has its answer, the batches of each partition are walked in lock-step, one batch
   per replica at a time, stopping at the first batch whose last offset reaches that replica's high
   watermark: last offsets must match (else the tool prints the mismatch and exits 1), CRCs are compared
   (a mismatch is printed, the walk goes on), and the verified offset moves past every batch that all
   replicas have;
3. lag = max high watermark over the replicas - verified offset; every `--report-interval-ms` the
   largest lag is printed.

This module is that algorithm as pure functions over plain values (`verify_partition`,
`VerificationState.verify`, `OncePass`), tested without a broker, plus a thin I/O shell
(`ReplicaVerifier`, `run_periodic`, `run_once`) on `kafka_client.KafkaClient`. It never prints: the
shell yields `Event`s and the CLI renders Kafka's texts.

Kafka's iteration orders show in its output — which replica is "replica a" in a mismatch line, which
partition wins a tie for the largest lag (the first one, by strictly-greater comparison), which
partition's mismatch comes first — so they are replayed here (`kafka_partition_order`,
`kafka_replica_order`): partitions sit in a `java.util.concurrent.ConcurrentHashMap` keyed by
`TopicPartition`, filled in the order of a Scala 2.13 immutable map; a partition's replicas in a
`ConcurrentHashMap` keyed by broker id.

Beyond Kafka: `run_once` (one full pass, for CI scripts: every partition verified up to the smallest
high watermark its replicas had at the start, then a summary), clear errors instead of Kafka's stack
traces (no topics, a replica's broker down at the start, a `--time` Kafka's consumer rejects), and a
note on stderr while a broker does not answer (Kafka's fetchers swallow the error silently).

Threads: `ReplicaVerifier` runs one daemon fetcher thread per broker (Kafka's `ReplicaFetcher`), each with
its own `KafkaClient` that no other thread touches; a round hands every fetcher its offsets and waits
for all the answers. Everything else runs on the caller's thread. Daemon threads, so Ctrl-C or SIGTERM
ends the tool at once even while a fetch waits on a broker.
"""

from __future__ import annotations

import queue
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from kafkaops.admin.kafka_client import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    BrokerNode,
    ClusterMetadata,
    KafkaClient,
    RawFetchResult,
)
from kafkaops.admin.kafka_text import topic_partition_hash
from kafkaops.admin.topics import topic_whitelist
from kafkaops.cluster.common.errors import (
    BrokerError,
    BrokerNotAvailableError,
    CorruptMessageError,
    InvalidArgumentError,
    KafkaOpsError,
    UsageError,
    from_code,
)
from kafkaops.cluster.common.jvm_text import java_split, scala_hash_set_order
from kafkaops.cluster.protocol.records import iter_batches
from kafkaops.cluster.zk.values import TopicPartition

DEFAULT_FETCH_SIZE = 1_048_576
"""Kafka 2.x: `ConsumerConfig.DEFAULT_MAX_PARTITION_FETCH_BYTES`."""
DEFAULT_MAX_WAIT_MS = 1000
DEFAULT_TOPIC_WHITE_LIST = ".*"
DEFAULT_TIME = LATEST_TIMESTAMP
DEFAULT_REPORT_INTERVAL_MS = 30_000
CLIENT_ID = "replicaVerificationTool"
SOCKET_TIMEOUT_MS = 30_000
"""Kafka's fetchers' socket timeout (and its consumer's request.timeout.ms)."""
INT_MAX = 2_147_483_647
RESPONSE_MAX_BYTES = INT_MAX
"""Kafka's `FetchRequest.Builder` default: no limit on the whole answer, only `--fetch-size` per partition."""
INVALID_HIGH_WATERMARK = -1
"""What Kafka's fetcher records for a replica whose fetch failed: it never lets the partition advance."""
MAX_STALLED_ROUNDS = 5
"""`run_once`: rounds a partition below its target may go without progress before the pass gives up."""

_HOST_PORT = re.compile(r".*?\[?([0-9a-zA-Z\-%._:]*)\]?:([0-9]+)")
"""Kafka's `Utils.HOST_PORT_PATTERN`, which `ToolsUtils.validatePortOrDie` accepts a broker with."""
INVALID_BROKER_LIST = "Please provide valid host:port like host1:9091,host2:9092\n "
"""`ToolsUtils.validatePortOrDie`'s usage message, trailing newline and space included."""
NO_TOPICS = "No topics found. [topic-white-list] if specified, is either filtering out all topics or there is no topic."
"""Kafka 2.8's error (the message of its log line) when the white list selects nothing."""


# --- values ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BatchInfo:
    """What Kafka compares of one record batch (its `MessageInfo`): last offset and stored CRC."""

    last_offset: int
    checksum: int

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1


@dataclass(frozen=True, slots=True)
class ReplicaData:
    """One replica's answer for one partition: its batches from the fetch offset on, and its high
    watermark (`INVALID_HIGH_WATERMARK` with no batches when the fetch failed)."""

    batches: tuple[BatchInfo, ...]
    high_watermark: int


FAILED_FETCH = ReplicaData((), INVALID_HIGH_WATERMARK)


@dataclass(frozen=True, slots=True)
class OffsetMismatch:
    """Two replicas' batches in the same lock-step position end at different offsets (Kafka exits 1)."""

    topic_partition: TopicPartition
    replica: int
    offset: int
    other_replica: int
    other_offset: int


@dataclass(frozen=True, slots=True)
class ChecksumMismatch:
    """Two replicas' batches ending at `offset` have different CRCs (Kafka prints it and goes on)."""

    topic_partition: TopicPartition
    offset: int
    replica: int
    checksum: int
    other_replica: int
    other_checksum: int


@dataclass(frozen=True, slots=True)
class PartitionRound:
    """One partition after one round: where verification stood before and after, and its lag."""

    topic_partition: TopicPartition
    start_offset: int
    verified_offset: int
    high_watermarks: Mapping[int, int]
    checksum_mismatches: tuple[ChecksumMismatch, ...] = ()
    offset_mismatch: OffsetMismatch | None = None

    @property
    def max_high_watermark(self) -> int:
        return max(self.high_watermarks.values(), default=INVALID_HIGH_WATERMARK)

    @property
    def lag(self) -> int:
        return self.max_high_watermark - self.verified_offset


@dataclass(frozen=True, slots=True)
class MaxLag:
    """Kafka's `maxLag`, `maxLagTopicAndPartition` and `offsetWithMaxLag` after a round (-1, None, -1 when
    no partition had a lag above -1)."""

    lag: int
    topic_partition: TopicPartition | None
    offset: int


@dataclass(frozen=True, slots=True)
class RoundResult:
    """One verification round, partitions in Kafka's order. An offset mismatch ends the round where it is
    found, as Kafka's `Exit.exit(1)` does: later partitions are not in `partitions`."""

    partitions: tuple[PartitionRound, ...]
    max_lag: MaxLag

    @property
    def checksum_mismatches(self) -> tuple[ChecksumMismatch, ...]:
        return tuple(m for p in self.partitions for m in p.checksum_mismatches)

    @property
    def offset_mismatch(self) -> OffsetMismatch | None:
        return next((p.offset_mismatch for p in self.partitions if p.offset_mismatch is not None), None)


# --- Kafka's iteration orders ------------------------------------------------------------------------------

_INT_MASK = 0xFFFFFFFF


def _spread(h: int) -> int:
    """`ConcurrentHashMap.spread`."""
    h &= _INT_MASK
    return (h ^ (h >> 16)) & 0x7FFFFFFF


def _concurrent_hash_map_order(keys: Iterable[TopicPartition]) -> list[TopicPartition]:
    """Iteration order of `new ConcurrentHashMap()` (Kafka's `Pool`) after putting `keys` in this order:
    table 16, a resize once the count reaches 0.75·n, `transfer` keeping each bucket's last run of
    same-half keys in order and reversing the keys before it. Trees (8+ keys in one bucket of a table of
    64+) are not modelled."""
    hashes = {k: _spread(topic_partition_hash(k)) for k in dict.fromkeys(keys)}
    table: list[list[TopicPartition]] = [[] for _ in range(16)]
    for count, key in enumerate(hashes, start=1):
        table[hashes[key] & (len(table) - 1)].append(key)
        if count >= len(table) * 3 // 4:
            n = len(table)
            grown: list[list[TopicPartition]] = [[] for _ in range(2 * n)]
            for index, bucket in enumerate(table):
                if not bucket:
                    continue
                run_start = len(bucket) - 1
                run_bit = hashes[bucket[-1]] & n
                while run_start > 0 and hashes[bucket[run_start - 1]] & n == run_bit:
                    run_start -= 1
                low: list[TopicPartition] = []
                high: list[TopicPartition] = []
                (high if run_bit else low).extend(bucket[run_start:])
                for key_before in bucket[:run_start]:
                    (high if hashes[key_before] & n else low).insert(0, key_before)
                grown[index], grown[index + n] = low, high
            table = grown
    return [key for bucket in table for key in bucket]


def kafka_partition_order(partitions: Iterable[TopicPartition]) -> list[TopicPartition]:
    """The order Kafka 2.8 (Scala 2.13) verifies partitions in, which decides max-lag ties and the order of
    mismatch lines: `expectedReplicasPerTopicPartition` is an immutable map (CHAMP order of the
    partitions' hash codes; partitions whose hash codes are equal keep the order given), whose keys fill
    the `recordsCache` pool (a ConcurrentHashMap) that each round iterates."""
    return _concurrent_hash_map_order(scala_hash_set_order(partitions, topic_partition_hash))


def kafka_replica_order(replicas: Iterable[int]) -> list[int]:
    """The order Kafka walks a partition's replicas in: a ConcurrentHashMap keyed by broker id (a table of
    16 below 12 replicas), so by `id & 15` for small clusters. Ids in one bucket come in the order the
    fetchers answered in Kafka (a race); here by id."""
    ids = list(dict.fromkeys(replicas))
    n = 16
    while len(ids) >= n * 3 // 4:
        n *= 2
    return sorted(ids, key=lambda i: (_spread(i) & (n - 1), i))


# --- the comparison ----------------------------------------------------------------------------------------


def batch_infos(records: bytes | memoryview) -> tuple[BatchInfo, ...]:
    """The batches of a Fetch answer's RECORDS bytes as Kafka's tool sees them: last offset and the CRC
    stored in the header (not recomputed, as Kafka's `batch.checksum`); a truncated batch at the end
    (a size-limited answer) is left out. Raises CorruptMessageError for a malformed batch header."""
    return tuple(
        BatchInfo(b.header.last_offset, b.header.crc)
        for b in iter_batches(records, allow_truncated_tail=True, verify_crc=False)
    )


def verify_partition(
    tp: TopicPartition, fetch_offset: int, replicas: Sequence[tuple[int, ReplicaData]]
) -> PartitionRound:
    """Kafka's `ReplicaBuffer.verifyCheckSum` for one partition.

    `replicas` is (broker id, its answer) in Kafka's order (`kafka_replica_order`). Each step takes the
    next batch of every replica: a replica out of batches, or whose batch reaches its high watermark,
    ends the walk after this step (the other replicas' batches of the step are still compared); the
    first replica with a batch below its high watermark is the one the others are compared with. An
    offset mismatch stops everything (`offset_mismatch` is set); a checksum mismatch is recorded and
    the walk goes on. After a step in which every replica had a batch below its high watermark, the
    verified offset moves past the first replica's batch.
    """
    offset = fetch_offset
    mismatches: list[ChecksumMismatch] = []
    high_watermarks = {replica: data.high_watermark for replica, data in replicas}
    if not replicas:
        return PartitionRound(tp, fetch_offset, offset, high_watermarks)
    position = 0
    while True:
        in_all_replicas = True
        first: tuple[int, BatchInfo] | None = None
        for replica, data in replicas:
            if position >= len(data.batches):
                in_all_replicas = False
                continue
            batch = data.batches[position]
            if batch.last_offset >= data.high_watermark:  # only verify up to the high watermark
                in_all_replicas = False
                continue
            if first is None:
                first = (replica, batch)
                continue
            first_replica, first_batch = first
            if first_batch.last_offset != batch.last_offset:
                mismatch = OffsetMismatch(tp, first_replica, first_batch.last_offset, replica, batch.last_offset)
                return PartitionRound(tp, fetch_offset, offset, high_watermarks, tuple(mismatches), mismatch)
            if first_batch.checksum != batch.checksum:
                mismatches.append(
                    ChecksumMismatch(
                        tp, batch.last_offset, first_replica, first_batch.checksum, replica, batch.checksum
                    )
                )
        if not in_all_replicas or first is None:
            return PartitionRound(tp, fetch_offset, offset, high_watermarks, tuple(mismatches))
        offset = first[1].next_offset
        position += 1


class VerificationState:
    """Kafka's `ReplicaBuffer` without its threads and latches: the selected partitions with their replicas
    (in Kafka's orders) and each partition's verified offset, the next offset every replica is fetched
    from. Only the caller's thread uses it."""

    def __init__(self, replicas: Mapping[TopicPartition, Sequence[int]], initial_offsets: Mapping[TopicPartition, int]):
        missing = [str(tp) for tp in replicas if tp not in initial_offsets]
        if missing:
            raise ValueError(f"no initial offset for {', '.join(missing)}")
        self.order: tuple[TopicPartition, ...] = tuple(kafka_partition_order(replicas))
        self.replicas: dict[TopicPartition, tuple[int, ...]] = {
            tp: tuple(kafka_replica_order(replicas[tp])) for tp in self.order
        }
        self.offsets: dict[TopicPartition, int] = {tp: initial_offsets[tp] for tp in self.order}

    @property
    def brokers(self) -> list[int]:
        """Every broker that hosts a selected replica, ascending."""
        return sorted({b for ids in self.replicas.values() for b in ids})

    def fetch_offsets(self, broker_id: int) -> dict[TopicPartition, int]:
        """What `broker_id`'s fetcher asks for this round: each of its partitions at the verified offset."""
        return {tp: self.offsets[tp] for tp in self.order if broker_id in self.replicas[tp]}

    def verify(self, fetched: Mapping[TopicPartition, Mapping[int, ReplicaData]]) -> RoundResult:
        """One round of `verifyCheckSum` over every partition in Kafka's order; advances the verified
        offsets. A replica missing from `fetched` counts as a failed fetch. `maxLag` starts at -1 and only
        a strictly greater lag replaces it, so the first partition in Kafka's order wins a tie."""
        results: list[PartitionRound] = []
        max_lag = MaxLag(-1, None, -1)
        for tp in self.order:
            answers = fetched.get(tp, {})
            replicas = [(r, answers.get(r, FAILED_FETCH)) for r in self.replicas[tp]]
            result = verify_partition(tp, self.offsets[tp], replicas)
            self.offsets[tp] = result.verified_offset
            results.append(result)
            if result.offset_mismatch is not None:
                break
            if result.lag > max_lag.lag:
                max_lag = MaxLag(result.lag, tp, result.verified_offset)
        return RoundResult(tuple(results), max_lag)


def report_due(now_ms: int, last_report_ms: int, interval_ms: int) -> bool:
    """Kafka reports the max lag after a round when `now - lastReportTime > reportInterval`."""
    return now_ms - last_report_ms > interval_ms


# --- one pass (beyond Kafka) -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PartitionSummary:
    """One partition at the end of a `--once` pass. `target_offset` is the smallest high watermark its
    replicas had in the first round: the pass is over once `verified_offset` reaches it."""

    topic_partition: TopicPartition
    replicas: tuple[int, ...]
    start_offset: int
    target_offset: int
    verified_offset: int
    high_watermarks: Mapping[int, int]
    lag: int
    checksum_mismatches: tuple[ChecksumMismatch, ...]


@dataclass(frozen=True, slots=True)
class OnceSummary:
    """The result of a `--once` pass: partitions by topic and partition, every mismatch found."""

    partitions: tuple[PartitionSummary, ...]
    max_lag: MaxLag | None
    offset_mismatch: OffsetMismatch | None
    rounds: int

    @property
    def checksum_mismatches(self) -> tuple[ChecksumMismatch, ...]:
        return tuple(m for p in self.partitions for m in p.checksum_mismatches)

    @property
    def in_sync(self) -> bool:
        return self.offset_mismatch is None and not self.checksum_mismatches


class OncePass:
    """Bookkeeping of a `--once` pass over the rounds of a `VerificationState` (pure: rounds in, verdict
    out). The first round fixes each partition's target, the smallest high watermark among its replicas
    (every replica can serve the batches below it); the pass is done when every partition's verified
    offset reaches its target. A partition below its target that makes no progress for
    `max_stalled_rounds` rounds in a row is reported by `stalled()`."""

    def __init__(self, state: VerificationState, max_stalled_rounds: int = MAX_STALLED_ROUNDS) -> None:
        self.state = state
        self.start_offsets = dict(state.offsets)
        self.targets: dict[TopicPartition, int] = {}
        self.last: dict[TopicPartition, PartitionRound] = {}
        self.mismatches: dict[TopicPartition, list[ChecksumMismatch]] = {tp: [] for tp in state.order}
        self.offset_mismatch: OffsetMismatch | None = None
        self.max_lag: MaxLag | None = None
        self.rounds = 0
        self.max_stalled_rounds = max_stalled_rounds
        self._stalled: dict[TopicPartition, int] = dict.fromkeys(state.order, 0)

    def observe(self, result: RoundResult) -> None:
        self.rounds += 1
        for p in result.partitions:
            tp = p.topic_partition
            if tp not in self.targets:
                self.targets[tp] = min(p.high_watermarks.values(), default=INVALID_HIGH_WATERMARK)
            self.last[tp] = p
            self.mismatches[tp].extend(p.checksum_mismatches)
            below = p.verified_offset < self.targets[tp]
            self._stalled[tp] = self._stalled[tp] + 1 if below and p.verified_offset == p.start_offset else 0
        if result.offset_mismatch is not None:
            self.offset_mismatch = result.offset_mismatch
        else:
            self.max_lag = result.max_lag

    @property
    def done(self) -> bool:
        if self.offset_mismatch is not None:
            return True
        return len(self.targets) == len(self.state.order) and all(
            self.state.offsets[tp] >= target for tp, target in self.targets.items()
        )

    def stalled(self) -> list[PartitionRound]:
        """Partitions below their target that made no progress for `max_stalled_rounds` rounds."""
        return [self.last[tp] for tp, n in self._stalled.items() if n >= self.max_stalled_rounds]

    def summary(self) -> OnceSummary:
        partitions = []
        for tp in sorted(self.state.order):
            last = self.last.get(tp)
            partitions.append(
                PartitionSummary(
                    tp,
                    self.state.replicas[tp],
                    self.start_offsets[tp],
                    self.targets.get(tp, INVALID_HIGH_WATERMARK),
                    self.state.offsets[tp],
                    dict(last.high_watermarks) if last is not None else {},
                    last.lag if last is not None else INVALID_HIGH_WATERMARK - self.state.offsets[tp],
                    tuple(self.mismatches[tp]),
                )
            )
        return OnceSummary(tuple(partitions), self.max_lag, self.offset_mismatch, self.rounds)


# --- options and selection ---------------------------------------------------------------------------------


def validate_broker_list(broker_list: str) -> None:
    """`ToolsUtils.validatePortOrDie`: every comma-separated item must end in `:<digits>`. Raises UsageError
    with Kafka's text (printed with the usage, exit 1)."""
    items = java_split(broker_list, ",")
    if not items or not all(_HOST_PORT.fullmatch(item) for item in items):
        raise UsageError(INVALID_BROKER_LIST)


def validate_time(initial_offset_time: int) -> None:
    """-1 (latest), -2 (earliest) or a timestamp: Kafka's consumer rejects any other negative time."""
    if initial_offset_time < 0 and initial_offset_time not in (LATEST_TIMESTAMP, EARLIEST_TIMESTAMP):
        raise InvalidArgumentError(
            f"The target time {initial_offset_time} is invalid: --time takes -1 (latest), -2 (earliest) or a "
            "timestamp in milliseconds"
        )


def select_replicas(metadata: ClusterMetadata, topic_white_list: str) -> dict[TopicPartition, tuple[int, ...]]:
    """The partitions of the topics the white list selects (Kafka's `IncludeList`: a Java regex matching
    the whole name, commas for `|`, internal topics included) with their replicas, as the metadata lists
    them. Raises InvalidArgumentError for an invalid regex, no topic selected, or a selected topic the
    metadata answered with an error."""
    pattern = topic_whitelist(topic_white_list)
    selected = {name: info for name, info in metadata.topics.items() if pattern.fullmatch(name)}
    if not selected:
        raise InvalidArgumentError(NO_TOPICS)
    replicas: dict[TopicPartition, tuple[int, ...]] = {}
    for name in sorted(selected):
        info = selected[name]
        if info.error_code:
            raise InvalidArgumentError(f"Cannot verify topic {name}: {from_code(info.error_code)}")
        for p in info.partitions:
            replicas[TopicPartition(name, p.partition)] = p.replicas
    return replicas


def check_brokers_available(
    replicas: Mapping[TopicPartition, Sequence[int]], brokers: Mapping[int, BrokerNode]
) -> None:
    """Kafka's tool needs every replica's broker up at the start (it fails with NoSuchElementException);
    raise BrokerNotAvailableError naming the missing brokers and their partitions instead."""
    missing: dict[int, list[str]] = {}
    for tp, ids in replicas.items():
        for broker_id in ids:
            if broker_id not in brokers:
                missing.setdefault(broker_id, []).append(str(tp))
    if missing:
        detail = "; ".join(f"broker {b} (replicas of {', '.join(tps)})" for b, tps in sorted(missing.items()))
        raise BrokerNotAvailableError(
            f"Cannot verify replicas on brokers that are not available: {detail}. Every replica's broker must be "
            "up when the verification starts.",
            named=False,
        )


# --- the I/O shell -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Started:
    """`verification process is started.` (after the metadata and the initial offsets are read)."""

    partitions: int
    brokers: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class MaxLagReport:
    max_lag: MaxLag
    partitions: int


@dataclass(frozen=True, slots=True)
class FetchFailed:
    """Fetching from a broker failed, for all of it (`partitions` empty) or for some partitions with one
    error: those replicas hold the verification back until they answer again. Reported once per outage
    (beyond Kafka, whose fetchers stay silent)."""

    broker_id: int
    partitions: tuple[TopicPartition, ...]
    error: KafkaOpsError


@dataclass(frozen=True, slots=True)
class FetchRecovered:
    """Fetching from a broker (`partitions` empty) or some of its partitions works again."""

    broker_id: int
    partitions: tuple[TopicPartition, ...]


EventBody = Started | ChecksumMismatch | OffsetMismatch | MaxLagReport | FetchFailed | FetchRecovered | OnceSummary


@dataclass(frozen=True, slots=True)
class Event:
    """Something to tell the operator, stamped with the wall-clock time (ms) Kafka would print."""

    time_ms: int
    body: EventBody


@dataclass(frozen=True, slots=True)
class FetchRound:
    """Every fetcher's answers of one round: per partition the replicas that answered, and the errors."""

    replicas: dict[TopicPartition, dict[int, ReplicaData]] = field(default_factory=dict)
    failures: dict[tuple[int, TopicPartition | None], KafkaOpsError] = field(default_factory=dict)


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class _Fetcher:
    """Kafka's `ReplicaFetcher`: one daemon thread and one client for one broker. `submit` hands it a
    round's offsets; the answer (or the error) goes to the shared `answers` queue."""

    def __init__(
        self,
        broker_id: int,
        client: KafkaClient,
        fetch: Callable[
            [KafkaClient, int, dict[TopicPartition, int]], dict[TopicPartition, RawFetchResult | BrokerError]
        ],
        answers: queue.Queue[tuple[int, dict[TopicPartition, RawFetchResult | BrokerError] | KafkaOpsError]],
    ) -> None:
        self.broker_id = broker_id
        self.client = client
        self._fetch = fetch
        self._answers = answers
        self._requests: queue.Queue[dict[TopicPartition, int] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name=f"ReplicaFetcher-{broker_id}", daemon=True)
        self._thread.start()

    def submit(self, offsets: dict[TopicPartition, int]) -> None:
        self._requests.put(offsets)

    def stop(self) -> None:
        self._requests.put(None)

    def _run(self) -> None:
        while (offsets := self._requests.get()) is not None:
            try:
                self._answers.put((self.broker_id, self._fetch(self.client, self.broker_id, offsets)))
            except KafkaOpsError as error:
                self._answers.put((self.broker_id, error))
            except Exception as error:  # a bug must not leave the round waiting forever
                self._answers.put((self.broker_id, KafkaOpsError(f"Fetch from broker {self.broker_id}: {error!r}")))
        self.client.close()


class ReplicaVerifier:
    """The I/O side: reads the metadata and the initial offsets through one client, then fetches each round
    from every broker at once, one fetcher thread and one client per broker (Kafka's fetcher threads).

    `client_factory(bootstrap_servers)` makes the clients (tests may pass their own); `sleep` is how a
    failed fetcher waits `max_wait_ms` before answering, so a broker that is down does not spin the
    loop. Use as a context manager.
    """

    def __init__(
        self,
        broker_list: str,
        *,
        topic_white_list: str = DEFAULT_TOPIC_WHITE_LIST,
        fetch_size: int = DEFAULT_FETCH_SIZE,
        max_wait_ms: int = DEFAULT_MAX_WAIT_MS,
        initial_offset_time: int = DEFAULT_TIME,
        client_factory: Callable[[str], KafkaClient] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        validate_broker_list(broker_list)
        topic_whitelist(topic_white_list)
        validate_time(initial_offset_time)
        if not 0 < fetch_size <= INT_MAX:
            raise InvalidArgumentError(f"--fetch-size must be between 1 and {INT_MAX}, got {fetch_size}")
        if not 0 <= max_wait_ms <= INT_MAX:
            raise InvalidArgumentError(f"--max-wait-ms must be between 0 and {INT_MAX}, got {max_wait_ms}")
        self.broker_list = broker_list
        self.topic_white_list = topic_white_list
        self.fetch_size = fetch_size
        self.max_wait_ms = max_wait_ms
        self.initial_offset_time = initial_offset_time
        self._client_factory = client_factory or self._default_client
        self._sleep = sleep
        self._answers: queue.Queue[tuple[int, dict[TopicPartition, RawFetchResult | BrokerError] | KafkaOpsError]]
        self._answers = queue.Queue()
        self._fetchers: dict[int, _Fetcher] = {}
        self.state: VerificationState | None = None

    @staticmethod
    def _default_client(bootstrap_servers: str) -> KafkaClient:
        return KafkaClient(
            bootstrap_servers,
            client_id=CLIENT_ID,
            request_timeout_ms=SOCKET_TIMEOUT_MS,
            delivery_timeout_ms=2 * SOCKET_TIMEOUT_MS,
        )

    def __enter__(self) -> ReplicaVerifier:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the fetchers; each closes its client after the fetch it may be waiting on."""
        for fetcher in self._fetchers.values():
            fetcher.stop()
        self._fetchers.clear()

    def start(self) -> VerificationState:
        """Read the metadata, select the partitions, check their brokers are up and find the initial
        offsets (ListOffsets to each leader for `--time`; a timestamp after the last record starts at
        the end), then start one fetcher per broker. Raises InvalidArgumentError,
        BrokerNotAvailableError, or the Kafka error of a broker that does not answer
        (NetworkExceptionError when none of `--broker-list` does)."""
        client = self._client_factory(self.broker_list)
        try:
            metadata = client.metadata(None)
            replicas = select_replicas(metadata, self.topic_white_list)
            check_brokers_available(replicas, metadata.brokers)
            offsets = {tp: self._initial_offset(client, tp) for tp in replicas}
        finally:
            client.close()
        self.state = VerificationState(replicas, offsets)
        for broker_id in self.state.brokers:
            client = self._client_factory(metadata.brokers[broker_id].address)
            self._fetchers[broker_id] = _Fetcher(broker_id, client, self._fetch, self._answers)
        return self.state

    def _initial_offset(self, client: KafkaClient, tp: TopicPartition) -> int:
        try:
            found = client.list_offsets(tp.topic, tp.partition, self.initial_offset_time).offset
            if found < 0 and self.initial_offset_time >= 0:  # no record at or after the timestamp
                found = client.list_offsets(tp.topic, tp.partition, LATEST_TIMESTAMP).offset
        except KafkaOpsError as error:
            raise with_context(error, f"Cannot find the initial offset of {tp}") from None
        return found

    def _fetch(
        self, client: KafkaClient, broker_id: int, offsets: dict[TopicPartition, int]
    ) -> dict[TopicPartition, RawFetchResult | BrokerError]:
        """Runs on the broker's fetcher thread."""
        try:
            return client.fetch_raw_from_broker(
                broker_id, offsets, self.fetch_size, self.max_wait_ms, max_bytes=RESPONSE_MAX_BYTES
            )
        except KafkaOpsError:
            self._sleep(self.max_wait_ms / 1000)
            raise

    def fetch_round(self) -> FetchRound:
        """One Fetch per broker, all at once, each partition from its verified offset; waits for all."""
        if self.state is None:
            raise RuntimeError("start() first")
        for broker_id, fetcher in self._fetchers.items():
            fetcher.submit(self.state.fetch_offsets(broker_id))
        answers = FetchRound()
        for _ in self._fetchers:
            broker_id, results = self._answers.get()
            if isinstance(results, KafkaOpsError):
                answers.failures[(broker_id, None)] = results
                continue
            for tp, result in results.items():
                if isinstance(result, BrokerError):
                    answers.failures[(broker_id, tp)] = result
                    continue
                try:
                    batches = batch_infos(result.records)
                except CorruptMessageError as error:
                    answers.failures[(broker_id, tp)] = error
                    continue
                answers.replicas.setdefault(tp, {})[broker_id] = ReplicaData(batches, result.high_watermark)
        return answers


def with_context(error: KafkaOpsError, context: str) -> KafkaOpsError:
    """The same kind of error with `context` in front of its message (Kafka's error name stays first)."""
    if isinstance(error, BrokerError):
        return type(error)(f"{context}: {error.message}", named=error.named)
    return KafkaOpsError(f"{context}: {error}")


class _Outages:
    """Which fetches are failing, so that each outage is reported once, and its end once: per broker, the
    partitions that failed with the same error in one note."""

    def __init__(self) -> None:
        self.failing: set[tuple[int, TopicPartition | None]] = set()

    def update(self, answers: FetchRound) -> list[FetchFailed | FetchRecovered]:
        events: list[FetchFailed | FetchRecovered] = []
        ended = self.failing - answers.failures.keys()
        for broker_id in sorted({b for b, _ in ended}):
            if (broker_id, None) in ended:
                events.append(FetchRecovered(broker_id, ()))
            back = tuple(sorted(tp for b, tp in ended if b == broker_id and tp is not None))
            if back:
                events.append(FetchRecovered(broker_id, back))
        started: dict[tuple[int, str], tuple[KafkaOpsError, list[TopicPartition]]] = {}
        for (broker_id, tp), error in answers.failures.items():
            if (broker_id, tp) not in self.failing:
                group = started.setdefault((broker_id, str(error)), (error, []))
                if tp is not None:
                    group[1].append(tp)
        for (broker_id, _), (error, partitions) in sorted(started.items(), key=lambda item: item[0]):
            events.append(FetchFailed(broker_id, tuple(sorted(partitions)), error))
        self.failing = set(answers.failures)
        return events


def run_periodic(
    verifier: ReplicaVerifier,
    report_interval_ms: int = DEFAULT_REPORT_INTERVAL_MS,
    wall_clock_ms: Callable[[], int] = _wall_clock_ms,
) -> Iterator[Event]:
    """Kafka's tool: verify round after round, forever; the events to print as they happen. Ends after an
    OffsetMismatch (the caller exits 1). Raises what `start()` raises."""
    state = verifier.start()
    last_report_ms = wall_clock_ms()
    yield Event(wall_clock_ms(), Started(len(state.order), tuple(state.brokers)))
    outages = _Outages()
    while True:
        answers = verifier.fetch_round()
        for note in outages.update(answers):
            yield Event(wall_clock_ms(), note)
        result = state.verify(answers.replicas)
        for mismatch in result.checksum_mismatches:
            yield Event(wall_clock_ms(), mismatch)
        if result.offset_mismatch is not None:
            yield Event(wall_clock_ms(), result.offset_mismatch)
            return
        now_ms = wall_clock_ms()
        if report_due(now_ms, last_report_ms, report_interval_ms):
            yield Event(now_ms, MaxLagReport(result.max_lag, len(state.order)))
            last_report_ms = now_ms


def run_once(
    verifier: ReplicaVerifier,
    wall_clock_ms: Callable[[], int] = _wall_clock_ms,
    max_stalled_rounds: int = MAX_STALLED_ROUNDS,
) -> Iterator[Event]:
    """One pass (beyond Kafka): rounds until every partition is verified up to its target (`OncePass`),
    yielding mismatches as they are found, then the max lag of the last round and the `OnceSummary`. An
    offset mismatch ends the pass at once (no max-lag report). A failed fetch is raised (typed, with the
    broker and partition), and so is a pass that stops making progress (KafkaOpsError)."""
    state = verifier.start()
    yield Event(wall_clock_ms(), Started(len(state.order), tuple(state.brokers)))
    tracker = OncePass(state, max_stalled_rounds)
    while True:
        answers = verifier.fetch_round()
        if answers.failures:
            (broker_id, tp), error = min(
                answers.failures.items(), key=lambda item: (item[0][0], item[0][1] or ("", -1))
            )
            what = f"from broker {broker_id}" if tp is None else f"{tp} from broker {broker_id}"
            raise with_context(error, f"Fetching {what} failed")
        result = state.verify(answers.replicas)
        tracker.observe(result)
        for mismatch in result.checksum_mismatches:
            yield Event(wall_clock_ms(), mismatch)
        if result.offset_mismatch is not None:
            yield Event(wall_clock_ms(), result.offset_mismatch)
            yield Event(wall_clock_ms(), tracker.summary())
            return
        if tracker.done:
            yield Event(wall_clock_ms(), MaxLagReport(result.max_lag, len(state.order)))
            yield Event(wall_clock_ms(), tracker.summary())
            return
        stuck = tracker.stalled()
        if stuck:
            detail = "; ".join(
                f"{p.topic_partition} at offset {p.verified_offset} (target {tracker.targets[p.topic_partition]}, "
                f"high watermarks {', '.join(f'{r}={hw}' for r, hw in p.high_watermarks.items())})"
                for p in stuck
            )
            raise KafkaOpsError(
                f"Verification made no progress in {max_stalled_rounds} rounds: {detail}. Is a batch larger than "
                f"--fetch-size ({verifier.fetch_size} bytes)?"
            )

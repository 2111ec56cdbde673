"""A consumer in a group: Kafka's `KafkaConsumer.subscribe` with its `ConsumerCoordinator`, single-threaded.

    find the coordinator ─► JoinGroup (again with the member id the coordinator hands out, KIP-394)
      └─► the leader assigns (Kafka's RangeAssignor) ─► SyncGroup ─► positions from OffsetFetch, else
          auto.offset.reset ─► poll: Fetch, Heartbeat when due, auto-commit when due
    a rebalance (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, a new coordinator) commits
    what was consumed first (Kafka's onJoinPrepare), then joins again; close commits and leaves
    (LeaveGroup; a static member, with `group.instance.id`, does not leave, as Kafka's does not).

Heartbeats are sent from `poll`, so the caller must poll within the session timeout (Kafka's consumer has
a background thread for them; ours has none: the console tools and the benchmarks poll continuously).
What `poll` returned is what gets committed: at-least-once, re-reads only after the last commit.
Not thread-safe. Clocks and sleeps are injected.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.kafka_client.connection import NotSent
from kafkaops.admin.kafka_client.consumer import OffsetResetPolicy, apply_fetch_results
from kafkaops.admin.kafka_client.consumer_protocol import (
    PROTOCOL_TYPE,
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
    range_assign,
)
from kafkaops.admin.kafka_client.fetcher import DEFAULT_MAX_BYTES, DEFAULT_PARTITION_MAX_BYTES, READ_UNCOMMITTED
from kafkaops.admin.kafka_client.group_admin import GROUP_KEY_TYPE
from kafkaops.admin.kafka_client.records import ConsumerRecord
from kafkaops.cluster.common.errors import (
    BrokerError,
    CoordinatorNotAvailableError,
    FencedInstanceIdError,
    IllegalGenerationError,
    KafkaProtocolError,
    MemberIdRequiredError,
    NetworkExceptionError,
    NotCoordinatorError,
    OffsetOutOfRangeError,
    RebalanceInProgressError,
    RequestTimedOutError,
    UnknownMemberIdError,
    from_code,
)
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.values import TopicPartition

ASSIGNOR = "range"
_COORDINATOR_GONE = (NotCoordinatorError, CoordinatorNotAvailableError, NetworkExceptionError, RequestTimedOutError)
_REJOIN = (RebalanceInProgressError, IllegalGenerationError, UnknownMemberIdError)


class CommitFailedError(KafkaProtocolError):
    """Kafka's CommitFailedException (no error code of its own): the group rebalanced before the commit."""


@dataclass(frozen=True)
class GroupConsumerConfig:
    """Kafka's consumer settings for a group member (Kafka's defaults)."""

    group_id: str
    session_timeout_ms: int = 10000
    rebalance_timeout_ms: int = 300000
    """`max.poll.interval.ms`: how long the coordinator waits for this member to rejoin."""
    heartbeat_interval_ms: int = 3000
    enable_auto_commit: bool = True
    auto_commit_interval_ms: int = 5000
    auto_offset_reset: OffsetResetPolicy = OffsetResetPolicy.LATEST
    group_instance_id: str | None = None
    max_wait_ms: int = 500
    max_bytes: int = DEFAULT_MAX_BYTES
    partition_max_bytes: int = DEFAULT_PARTITION_MAX_BYTES
    isolation_level: int = READ_UNCOMMITTED
    default_api_timeout_ms: int = 60000
    """How long a commit or an offset fetch may retry while the coordinator moves."""


class GroupConsumer:
    """A group member subscribed to `topics`. `poll` returns records of the partitions assigned to it."""

    def __init__(
        self,
        client: KafkaClient,
        topics: Sequence[str],
        config: GroupConsumerConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.client, self.topics, self.config = client, list(topics), config
        self._clock, self._sleep = clock, sleep
        self.member_id = ""
        self.generation = -1
        self.coordinator: int | None = None
        self.positions: dict[TopicPartition, int] = {}
        self._committed: dict[TopicPartition, int] = {}
        self._joined = False
        self._next_heartbeat = 0.0
        self._next_commit = clock() + config.auto_commit_interval_ms / 1000
        self.rebalances = 0
        """Completed joins, for benchmarks and tests."""
        self.join_time_ms = 0.0
        """Time spent joining (JoinGroup to the assignment), summed over rebalances (the perf tool's)."""

    @property
    def assignment(self) -> list[TopicPartition]:
        return sorted(self.positions)

    # -- the coordinator --

    def _ensure_coordinator(self) -> int:
        """The coordinator, looked up once if unknown. Raises CoordinatorNotAvailableError (retriable) when
        the lookup fails for now, the answer's error when it is not retriable."""
        if self.coordinator is None:
            try:
                _, answer = self.client.controller_request(
                    ApiKey.FIND_COORDINATOR, {"key": self.config.group_id, "key_type": GROUP_KEY_TYPE}
                )
            except NotSent:
                answer = {"error_code": CoordinatorNotAvailableError.code}
            except (NetworkExceptionError, RequestTimedOutError):
                answer = {"error_code": CoordinatorNotAvailableError.code}
            code = answer["error_code"]
            if code == 0:
                self.coordinator = int(answer["node_id"])
            elif from_code(code).retriable:
                raise CoordinatorNotAvailableError(f"The coordinator of group {self.config.group_id} is not known yet")
            else:
                raise from_code(code, answer.get("error_message"))
        return self.coordinator

    def _request(self, api_key: ApiKey, body: Mapping[str, Any], extra_timeout_ms: int = 0) -> dict[str, Any]:
        """One request to the coordinator; an unreachable one is forgotten and raised as NotCoordinator."""
        coordinator = self._ensure_coordinator()
        try:
            _, answer = self.client.broker_request(coordinator, api_key, body, extra_timeout_ms)
        except (NotSent, NetworkExceptionError, RequestTimedOutError) as error:
            self.coordinator = None
            raise NotCoordinatorError(str(error)) from None
        return answer

    def _coordinator_error(self, code: int) -> BrokerError | None:
        if not code:
            return None
        error = from_code(code)
        if isinstance(error, _COORDINATOR_GONE):
            self.coordinator = None
        return error

    # -- joining --

    def _join_once(self) -> bool:
        """One JoinGroup + SyncGroup round; True once this member has its assignment."""
        subscription = encode_subscription(Subscription(tuple(self.topics), None, tuple(self.positions)))
        answer = self._request(
            ApiKey.JOIN_GROUP,
            {
                "group_id": self.config.group_id,
                "session_timeout_ms": self.config.session_timeout_ms,
                "rebalance_timeout_ms": self.config.rebalance_timeout_ms,
                "member_id": self.member_id,
                "group_instance_id": self.config.group_instance_id,
                "protocol_type": PROTOCOL_TYPE,
                "protocols": [{"name": ASSIGNOR, "metadata": subscription}],
            },
            self.config.rebalance_timeout_ms,
        )
        error = self._coordinator_error(answer["error_code"])
        if isinstance(error, MemberIdRequiredError):
            self.member_id = answer["member_id"]
            return False
        if isinstance(error, UnknownMemberIdError):
            self.member_id = ""
            return False
        if isinstance(error, FencedInstanceIdError) or (error is not None and not error.retriable):
            raise error
        if error is not None:
            return False
        self.member_id, self.generation = answer["member_id"], answer["generation_id"]
        assignments = self._assign(answer["members"]) if answer["leader"] == self.member_id else {}
        return self._sync(assignments)

    def _assign(self, members: Sequence[Mapping[str, Any]]) -> dict[str, bytes]:
        subscriptions: dict[str, Sequence[str]] = {
            m["member_id"]: decode_subscription(m["metadata"]).topics for m in members
        }
        wanted = sorted({t for topics in subscriptions.values() for t in topics})
        counts = {name: len(info.partitions) for name, info in self.client.metadata(wanted).topics.items()}
        plan = range_assign(counts, subscriptions)
        return {member: encode_assignment(Assignment(tuple(tps))) for member, tps in plan.items()}

    def _sync(self, assignments: Mapping[str, bytes]) -> bool:
        answer = self._request(
            ApiKey.SYNC_GROUP,
            {
                "group_id": self.config.group_id,
                "generation_id": self.generation,
                "member_id": self.member_id,
                "group_instance_id": self.config.group_instance_id,
                "protocol_type": PROTOCOL_TYPE,
                "protocol_name": ASSIGNOR,
                "assignments": [{"member_id": m, "assignment": a} for m, a in assignments.items()],
            },
        )
        error = self._coordinator_error(answer["error_code"])
        if isinstance(error, UnknownMemberIdError):
            self.member_id = ""
        if error is not None:
            if not error.retriable and not isinstance(error, _REJOIN):
                raise error
            return False
        partitions = decode_assignment(answer["assignment"]).partitions if answer["assignment"] else ()
        self._take(partitions)
        return True

    def _take(self, partitions: Sequence[TopicPartition]) -> None:
        """Positions of a new assignment: the group's committed offsets, else auto.offset.reset."""
        committed = self._fetch_committed(partitions)
        self.positions = {}
        for tp in partitions:
            self.positions[tp] = committed[tp] if tp in committed else self._reset_position(tp)
        self._committed = dict(committed)

    def _fetch_committed(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        if not partitions:
            return {}
        deadline = self._clock() + self.config.default_api_timeout_ms / 1000
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        while True:
            try:
                answer = self._request(
                    ApiKey.OFFSET_FETCH,
                    {
                        "group_id": self.config.group_id,
                        "topics": [{"name": t, "partition_indexes": ids} for t, ids in by_topic.items()],
                        "require_stable": True,
                    },
                )
                error = self._coordinator_error(answer.get("error_code", 0))
            except _COORDINATOR_GONE as moved:
                error = moved
            if error is None:
                return {
                    TopicPartition(t["name"], p["partition_index"]): p["committed_offset"]
                    for t in answer["topics"]
                    for p in t["partitions"]
                    if p["error_code"] == 0 and p["committed_offset"] >= 0
                }
            if not error.retriable:
                raise error
            self._backoff(deadline, "fetching committed offsets", error)

    def _backoff(self, deadline: float, doing: str, error: BrokerError) -> None:
        if self._clock() >= deadline:
            raise RequestTimedOutError(
                f"Timeout of {self.config.default_api_timeout_ms}ms expired before {doing}: {error}", named=False
            )
        self._sleep(self.client.retry_backoff_ms / 1000)

    def _reset_to_policy(self, tp: TopicPartition) -> None:
        self.positions[tp] = self._reset_position(tp)

    def _reset_position(self, tp: TopicPartition) -> int:
        if self.config.auto_offset_reset is OffsetResetPolicy.NONE:
            raise OffsetOutOfRangeError(f"Undefined offset with no reset policy for partitions: [{tp}]")
        offset = self.client.list_offsets(tp.topic, tp.partition, int(self.config.auto_offset_reset))
        return offset.offset

    def ensure_active(self, timeout_ms: int | None = None) -> bool:
        """Join the group if not a member; True once joined (False if `timeout_ms` passed first)."""
        deadline = None if timeout_ms is None else self._clock() + timeout_ms / 1000
        started = self._clock()
        while not self._joined:
            try:
                self._joined = self._join_once()
            except _COORDINATOR_GONE:
                self._joined = False
            if self._joined:
                self.rebalances += 1
                self.join_time_ms += (self._clock() - started) * 1000
                self._next_heartbeat = self._clock() + self.config.heartbeat_interval_ms / 1000
                break
            if deadline is not None and self._clock() >= deadline:
                return False
            self._sleep(self.client.retry_backoff_ms / 1000)
        return True

    def _rejoin(self) -> None:
        """Kafka's onJoinPrepare: commit what was consumed (if this member may), then join again."""
        if self.config.enable_auto_commit:
            # the generation may be gone: the next owner then re-reads from the last commit
            with contextlib.suppress(BrokerError, CommitFailedError):
                self.commit()
        self._joined = False

    # -- heartbeats and commits --

    def _heartbeat(self) -> None:
        try:
            answer = self._request(
                ApiKey.HEARTBEAT,
                {
                    "group_id": self.config.group_id,
                    "generation_id": self.generation,
                    "member_id": self.member_id,
                    "group_instance_id": self.config.group_instance_id,
                },
            )
            error = self._coordinator_error(answer["error_code"])
        except _COORDINATOR_GONE as moved:
            error = moved
        self._next_heartbeat = self._clock() + self.config.heartbeat_interval_ms / 1000
        if isinstance(error, UnknownMemberIdError) and self.config.group_instance_id is None:
            self.member_id = ""
        if isinstance(error, FencedInstanceIdError):
            raise error
        if error is not None:
            self._rejoin()

    def commit(self, offsets: Mapping[TopicPartition, int] | None = None) -> None:
        """Commit `offsets` (by default the positions: what poll returned) under this generation. Raises
        CommitFailedError if the group rebalanced meanwhile; retries while the coordinator moves."""
        wanted = dict(self.positions if offsets is None else offsets)
        wanted = {tp: o for tp, o in wanted.items() if self._committed.get(tp) != o}
        if not wanted:
            return
        by_topic: dict[str, list[int]] = {}
        for tp in wanted:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        body = {
            "group_id": self.config.group_id,
            "generation_id": self.generation,
            "member_id": self.member_id,
            "group_instance_id": self.config.group_instance_id,
            "retention_time_ms": -1,
            "topics": [
                {
                    "name": t,
                    "partitions": [
                        {
                            "partition_index": p,
                            "committed_offset": wanted[TopicPartition(t, p)],
                            "committed_metadata": "",
                        }
                        for p in ids
                    ],
                }
                for t, ids in by_topic.items()
            ],
        }
        deadline = self._clock() + self.config.default_api_timeout_ms / 1000
        while True:
            try:
                answer = self._request(ApiKey.OFFSET_COMMIT, body)
                codes = [p["error_code"] for t in answer["topics"] for p in t["partitions"] if p["error_code"]]
                error = self._coordinator_error(codes[0] if codes else 0)
            except _COORDINATOR_GONE as moved:
                error = moved
            if error is None:
                self._committed.update(wanted)
                return
            if isinstance(error, _REJOIN):
                raise CommitFailedError(str(error))
            if not error.retriable:
                raise error
            self._backoff(deadline, "successfully committing offsets", error)

    def _maybe_auto_commit(self) -> None:
        if self.config.enable_auto_commit and self._clock() >= self._next_commit:
            self._next_commit = self._clock() + self.config.auto_commit_interval_ms / 1000
            try:
                self.commit()
            except CommitFailedError:
                self._joined = False

    # -- polling --

    def poll(self, timeout_ms: int) -> list[ConsumerRecord]:
        """Records of the assigned partitions, waiting up to `timeout_ms`; joins, heartbeats and
        auto-commits on the way. [] if none came."""
        deadline = self._clock() + max(timeout_ms, 0) / 1000
        while True:
            if not self.ensure_active(max(int((deadline - self._clock()) * 1000), 0)):
                return []
            if self._clock() >= self._next_heartbeat:
                self._heartbeat()
                if not self._joined:
                    continue
            self._maybe_auto_commit()
            records = self._fetch(deadline)
            if records or self._clock() >= deadline:
                return records

    def _fetch(self, deadline: float) -> list[ConsumerRecord]:
        if not self.positions:
            self._sleep(min(0.1, max(deadline - self._clock(), 0)))
            return []
        until_heartbeat_ms = int((self._next_heartbeat - self._clock()) * 1000)
        wait_ms = max(min(self.config.max_wait_ms, int((deadline - self._clock()) * 1000), until_heartbeat_ms), 0)
        results = self.client.fetch_many(
            dict(self.positions),
            wait_ms,
            self.config.max_bytes,
            self.config.partition_max_bytes,
            self.config.isolation_level,
        )
        records, retry = apply_fetch_results(results, self.positions, self._reset_to_policy)
        if retry and not records:
            self._sleep(min(self.client.retry_backoff_ms / 1000, max(deadline - self._clock(), 0)))
        return records

    def close(self) -> None:
        """Commit what was consumed (auto-commit on), then leave the group (a dynamic member only)."""
        if self._joined and self.config.enable_auto_commit:
            with contextlib.suppress(BrokerError, CommitFailedError):
                self.commit()
        if self._joined and self.config.group_instance_id is None and self.coordinator is not None:
            # if it fails, the coordinator expires the member after its session timeout
            with contextlib.suppress(BrokerError):
                self._request(
                    ApiKey.LEAVE_GROUP,
                    {
                        "group_id": self.config.group_id,
                        "member_id": self.member_id,
                        "members": [{"member_id": self.member_id, "group_instance_id": None}],
                    },
                )
        self._joined = False
        self.positions = {}

"""Incremental fetch sessions (KIP-227, Kafka's `FetchSession.scala` and `FetchSessionHandler`) between
brokers: pure bookkeeping, used by the leader's replica manager and the follower's fetcher.

A follower's fetcher opens a session with a full request (epoch 0); the leader keeps what each partition
was asked for, and later requests (epoch 1, 2, ...) carry only the partitions whose fetch position
changed, plus the ones to forget. The leader answers only the partitions with something to say:
records, an error, or a high watermark or log start offset that moved since it last answered. An idle
follower of 50,000 partitions then sends and receives a few bytes per round, where a full request and
answer were encoded and decoded whole twice a second, on both brokers.

Only followers get sessions. A consumer asking for one (kafka-python sends epoch 0) is answered
session id 0, "no session", and keeps sending full requests (kafka-protocol.md §6: clients stay
sessionless).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Mapping

from kafkaops.cluster.broker.requests import FetchPartition
from kafkaops.cluster.broker.responses import FetchPartitionResult
from kafkaops.cluster.common import errors
from kafkaops.cluster.zk.values import TopicPartition

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
SESSIONLESS = 0
# Kafka's max.incremental.fetch.session.cache.slots and min.incremental.fetch.session.eviction.ms
CACHE_SLOTS = 1000
EVICTION_S = 120.0


def next_epoch(epoch: int) -> int:
    """The epoch after `epoch`; past INT32 max it wraps to 1 (0 opens a session, -1 closes one)."""
    return 1 if epoch >= 2**31 - 1 else epoch + 1


class FetchSession:
    """The leader's side of one follower's session: the partitions it fetches and what it was last told."""

    def __init__(self, session_id: int, replica_id: int, now: float) -> None:
        self.id = session_id
        self.replica_id = replica_id
        self.epoch = 1  # the epoch the next incremental request must carry
        self.partitions: dict[TopicPartition, FetchPartition] = {}
        self.answered: dict[TopicPartition, tuple[int, int]] = {}
        """(high watermark, log start offset) last answered per partition."""
        self.last_used = now

    def take(
        self, requested: Iterable[FetchPartition], forgotten: Iterable[TopicPartition], incremental: bool
    ) -> list[FetchPartition]:
        """Apply a request to the session; returns every partition the session now fetches. A full request
        names them all; an incremental one adds or replaces those it names and drops the forgotten ones."""
        if not incremental:
            self.partitions, self.answered = {p.tp: p for p in requested}, {}
        else:
            partitions = self.partitions
            for p in requested:
                partitions[p.tp] = p
            for tp in forgotten:
                partitions.pop(tp, None)
                self.answered.pop(tp, None)
        return list(self.partitions.values())

    def must_answer(self, tp: TopicPartition, high_watermark: int, log_start_offset: int) -> bool:
        """Kafka's `CachedPartition.maybeUpdateResponseData` for an answer without records or error."""
        return self.answered.get(tp) != (high_watermark, log_start_offset)

    def respond(self, answers: Iterable[FetchPartitionResult], incremental: bool) -> list[FetchPartitionResult]:
        """The answers the response carries (all of a full one; of an incremental one those with records,
        an error, or news), remembered as told; an incremental response moves the session's epoch on."""
        included = [
            answer
            for answer in answers
            if not incremental
            or answer.records
            or answer.error_code != errors.NONE
            or self.must_answer(answer.tp, answer.high_watermark, answer.log_start_offset)
        ]
        for answer in included:
            if answer.error_code == errors.NONE:
                self.answered[answer.tp] = (answer.high_watermark, answer.log_start_offset)
        if incremental:
            self.epoch = next_epoch(self.epoch)
        return included


Position = tuple[int, int, int]
"""A follower's position in one partition: (fetch offset, log start offset, current leader epoch)."""


class FetchSessionHandler:
    """The follower's side of its session with one leader (Kafka's `FetchSessionHandler`): which
    partitions the next request names, and what the leader holds once it answered."""

    def __init__(self) -> None:
        self.session_id = SESSIONLESS
        self.epoch = INITIAL_EPOCH  # of the next request: 0 opens a session with a full request
        self.partitions: dict[TopicPartition, Position] = {}

    def next_request(
        self, wanted: Mapping[TopicPartition, Position]
    ) -> tuple[dict[TopicPartition, Position], list[TopicPartition]]:
        """(partitions to name, partitions to forget) for a request fetching `wanted`."""
        if self.epoch == INITIAL_EPOCH:
            return dict(wanted), []
        held = self.partitions.get
        naming = {tp: position for tp, position in wanted.items() if held(tp) != position}
        if self.partitions.keys() == wanted.keys():  # the usual round: a set comparison in C, no loop
            return naming, []
        return naming, [tp for tp in self.partitions if tp not in wanted]

    def answered(self, wanted: Mapping[TopicPartition, Position], session_id: int) -> None:
        """The leader answered the request for `wanted` without a top-level error: it holds `wanted` now."""
        if self.epoch == INITIAL_EPOCH:
            self.session_id = session_id
            if session_id == SESSIONLESS:  # the leader keeps no session: full requests again
                return
        self.epoch = next_epoch(self.epoch)
        self.partitions = dict(wanted)

    def reset(self) -> None:
        """Start over with a full request; it names the old session so that the leader closes it."""
        self.epoch = INITIAL_EPOCH
        self.partitions = {}

    def lost(self) -> None:
        """The leader does not know the session (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH)."""
        self.session_id = SESSIONLESS
        self.reset()


class FetchSessionCache:
    """Sessions by id (Kafka's `FetchSessionCache`); one per broker, used on its event loop only."""

    def __init__(self, slots: int = CACHE_SLOTS, clock: Callable[[], float] = time.monotonic) -> None:
        self.slots = slots
        self.clock = clock
        self.sessions: dict[int, FetchSession] = {}

    def resolve(self, session_id: int, epoch: int, replica_id: int) -> tuple[FetchSession | None, bool, int]:
        """Kafka's `FetchManager.newContext`: (session or None for a sessionless fetch, whether the request
        is incremental, error code). Epoch -1 closes the session named and fetches without one; epoch 0
        closes it and opens a new one (for a follower); any other epoch continues the session named."""
        now = self.clock()
        if epoch in (FINAL_EPOCH, INITIAL_EPOCH):
            if session_id != SESSIONLESS:
                self.sessions.pop(session_id, None)
            if epoch == FINAL_EPOCH or replica_id < 0:
                return None, False, errors.NONE
            return self._open(replica_id, now), False, errors.NONE
        session = self.sessions.get(session_id)
        if session is None or session.replica_id != replica_id:
            return None, False, errors.FetchSessionIdNotFoundError.code
        if session.epoch != epoch:
            return None, False, errors.InvalidFetchSessionEpochError.code
        session.last_used = now
        return session, True, errors.NONE

    def _open(self, replica_id: int, now: float) -> FetchSession:
        for stale in [s.id for s in self.sessions.values() if now - s.last_used > EVICTION_S]:
            del self.sessions[stale]
        if len(self.sessions) >= self.slots:
            del self.sessions[min(self.sessions.values(), key=lambda s: s.last_used).id]
        session_id = SESSIONLESS
        while session_id == SESSIONLESS or session_id in self.sessions:
            session_id = random.randint(1, 2**31 - 1)
        session = self.sessions[session_id] = FetchSession(session_id, replica_id, now)
        return session

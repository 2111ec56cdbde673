"""The purgatory (Kafka's `DelayedOperationPurgatory`, cases after its DelayedOperationTest) and the broker's
delayed operations on it: DelayedProduce (acks=all) and DelayedFetch (min bytes / max wait), against
fakes of what they look at."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field

import pytest

from kafkaops.cluster.broker.delayed_fetch import DelayedFetch, FetchRead
from kafkaops.cluster.broker.delayed_operation import DelayedOperation, DelayedOperationPurgatory
from kafkaops.cluster.broker.delayed_produce import DelayedProduce, ProducePartitionStatus
from kafkaops.cluster.broker.requests import FetchPartition
from kafkaops.cluster.broker.responses import FetchPartitionResult
from kafkaops.cluster.common import errors
from kafkaops.cluster.zk.values import TopicPartition


def run(coroutine):  # type: ignore[no-untyped-def]
    return asyncio.run(coroutine)


class MockDelayedOperation(DelayedOperation[str, str]):
    """Kafka's MockDelayedOperation: completable on demand, counting its callbacks."""

    def __init__(self, timeout_ms: int, keys: Iterable[str]) -> None:
        super().__init__(timeout_ms)
        self.keys = tuple(keys)
        self.completable = False
        self.completions = 0
        self.expirations = 0

    def watch_keys(self) -> Iterable[str]:
        return self.keys

    def try_complete(self, key: str | None) -> bool:
        return self.completable and self.force_complete()

    def on_complete(self) -> str:
        self.completions += 1
        return "expired" if self.expired else "done"

    def on_expiration(self) -> None:
        self.expirations += 1


# --- the purgatory -------------------------------------------------------------------------------------


def test_request_satisfaction():
    async def scenario() -> None:
        purgatory: DelayedOperationPurgatory[str] = DelayedOperationPurgatory("mock")
        r1, r2 = MockDelayedOperation(100_000, ["test1"]), MockDelayedOperation(100_000, ["test2"])
        assert purgatory.check_and_complete("test1") == 0
        assert not purgatory.try_complete_else_watch(r1)
        assert purgatory.check_and_complete("test1") == 0
        assert not purgatory.try_complete_else_watch(r2)
        assert purgatory.check_and_complete("test2") == 0
        r1.completable = True
        assert purgatory.check_and_complete("test1") == 1
        assert purgatory.check_and_complete("test1") == 0
        r2.completable = True
        assert purgatory.check_and_complete("test2") == 1
        assert purgatory.check_and_complete("test2") == 0
        assert (await r1.result(), await r2.result()) == ("done", "done")
        assert purgatory.delayed() == 0 and purgatory.watched() == 0

    run(scenario())


def test_an_operation_that_can_complete_at_once_is_never_watched():
    async def scenario() -> None:
        purgatory: DelayedOperationPurgatory[str] = DelayedOperationPurgatory("mock")
        operation = MockDelayedOperation(100_000, ["a", "b"])
        operation.completable = True
        assert purgatory.try_complete_else_watch(operation)
        assert purgatory.watched() == 0 and purgatory.watched_keys() == []
        assert await operation.result() == "done"

    run(scenario())


def test_request_expiry():
    async def scenario() -> None:
        purgatory: DelayedOperationPurgatory[str] = DelayedOperationPurgatory("mock")
        r1, r2 = MockDelayedOperation(20, ["test1"]), MockDelayedOperation(200_000, ["test1", "test2"])
        loop = asyncio.get_running_loop()
        started = loop.time()
        assert not purgatory.try_complete_else_watch(r1)
        assert not purgatory.try_complete_else_watch(r2)
        assert await r1.result() == "expired"
        assert loop.time() - started >= 0.02
        assert (r1.completions, r1.expirations, r1.expired) == (1, 1, True)
        assert not r2.is_completed and purgatory.delayed() == 1
        assert purgatory.watched_keys() == ["test1", "test2"]

    run(scenario())


def test_an_operation_completes_once_whoever_gets_there_first():
    async def scenario() -> None:
        purgatory: DelayedOperationPurgatory[str] = DelayedOperationPurgatory("mock")
        operation = MockDelayedOperation(10, ["k"])
        purgatory.try_complete_else_watch(operation)
        assert operation.force_complete()
        assert not operation.force_complete()
        await asyncio.sleep(0.05)  # its timer was cancelled: no expiry after completion
        operation.completable = True
        assert purgatory.check_and_complete("k") == 0
        assert (operation.completions, operation.expirations, operation.expired) == (1, 0, False)

    run(scenario())


def test_watch_lists_are_left_on_completion_and_empty_keys_dropped_when_checked():
    async def scenario() -> None:
        purgatory: DelayedOperationPurgatory[str] = DelayedOperationPurgatory("mock")
        r1, r2 = MockDelayedOperation(100_000, ["a", "b", "c"]), MockDelayedOperation(100_000, ["a"])
        purgatory.try_complete_else_watch(r1)
        purgatory.try_complete_else_watch(r2)
        assert purgatory.watched() == 4 and purgatory.delayed() == 2
        r1.force_complete()
        assert purgatory.watched() == 1 and purgatory.watched_keys() == ["a"]
        assert purgatory.check_and_complete("b") == 0
        assert "b" not in purgatory._watchers  # a key without watchers is dropped once checked
        r2.force_complete()
        assert purgatory.delayed() == 0

    run(scenario())


def test_a_cancelled_waiter_abandons_its_operation():
    async def scenario() -> None:
        purgatory: DelayedOperationPurgatory[str] = DelayedOperationPurgatory("mock")
        operation = MockDelayedOperation(100_000, ["k"])
        purgatory.try_complete_else_watch(operation)
        waiter = asyncio.get_running_loop().create_task(operation.result())
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert operation.is_completed and operation.completions == 0
        assert purgatory.delayed() == 0 and purgatory.watched() == 0

    run(scenario())


def test_an_exception_of_on_complete_reaches_the_waiter():
    class Failing(MockDelayedOperation):
        def on_complete(self) -> str:
            raise ValueError("broken")

    async def scenario() -> None:
        operation = Failing(0, ["k"])
        DelayedOperationPurgatory[str]("mock").try_complete_else_watch(operation)
        with pytest.raises(ValueError, match="broken"):
            await operation.result()

    run(scenario())


def test_shutdown_stops_the_timers():
    async def scenario() -> None:
        purgatory: DelayedOperationPurgatory[str] = DelayedOperationPurgatory("mock")
        operation = MockDelayedOperation(10, ["k"])
        purgatory.try_complete_else_watch(operation)
        purgatory.shutdown()
        await asyncio.sleep(0.05)
        assert not operation.is_completed and operation.expirations == 0

    run(scenario())


# --- DelayedProduce ------------------------------------------------------------------------------------


@dataclass
class FakePartition:
    high_watermark: int = 0
    isr: tuple[int, ...] = (0, 1)


@dataclass
class Leadership:
    lost: set[TopicPartition] = field(default_factory=set)

    def leads(self, tp: TopicPartition, partition: object) -> bool:
        return tp not in self.lost


A, B = TopicPartition("t", 0), TopicPartition("t", 1)


def _produce(timeout_ms: int, leadership: Leadership, **required: tuple[FakePartition, int]) -> DelayedProduce:
    statuses = {
        {"a": A, "b": B}[name]: ProducePartitionStatus(partition, offset)  # type: ignore[arg-type]
        for name, (partition, offset) in required.items()
    }
    return DelayedProduce(timeout_ms, statuses, leadership.leads, lambda topic: 2)


def test_a_produce_completes_when_every_high_watermark_passes_its_batch():
    async def scenario() -> None:
        purgatory: DelayedOperationPurgatory[TopicPartition] = DelayedOperationPurgatory("Produce")
        a, b = FakePartition(), FakePartition()
        produce = _produce(100_000, Leadership(), a=(a, 5), b=(b, 3))
        assert not purgatory.try_complete_else_watch(produce)
        a.high_watermark = 5
        assert purgatory.check_and_complete(A) == 0  # b is still short
        b.high_watermark = 3
        assert purgatory.check_and_complete(B) == 1
        assert await produce.result() == {A: errors.NONE, B: errors.NONE}

    run(scenario())


def test_a_produce_already_replicated_completes_at_once():
    async def scenario() -> None:
        produce = _produce(100_000, Leadership(), a=(FakePartition(high_watermark=7), 7))
        assert DelayedOperationPurgatory[TopicPartition]("Produce").try_complete_else_watch(produce)
        assert await produce.result() == {A: errors.NONE}

    run(scenario())


def test_a_produce_answers_lost_leadership_timeouts_and_a_shrunk_isr():
    async def scenario() -> None:
        purgatory: DelayedOperationPurgatory[TopicPartition] = DelayedOperationPurgatory("Produce")
        leadership = Leadership()
        a, b = FakePartition(), FakePartition()
        produce = _produce(50, leadership, a=(a, 1), b=(b, 1))
        purgatory.try_complete_else_watch(produce)
        leadership.lost.add(A)
        purgatory.check_and_complete(A)
        assert await produce.result() == {A: errors.NotLeaderOrFollowerError.code, B: errors.RequestTimedOutError.code}
        shrunk = FakePartition()
        later = _produce(100_000, leadership, b=(shrunk, 1))
        purgatory.try_complete_else_watch(later)
        shrunk.high_watermark, shrunk.isr = 1, (0,)
        purgatory.check_and_complete(B)
        assert await later.result() == {B: errors.NotEnoughReplicasAfterAppendError.code}

    run(scenario())


# --- DelayedFetch --------------------------------------------------------------------------------------


class Log:
    """What a fetch reads: bytes available per partition, counting the reads."""

    def __init__(self) -> None:
        self.available: dict[TopicPartition, bytes] = {}
        self.reads = 0

    def read(self) -> FetchRead:
        self.reads += 1
        answers = [FetchPartitionResult(tp, errors.NONE, 0, 0, self.available.get(tp, b"")) for tp in (A, B)]
        return FetchRead(answers, sum(len(a.records) for a in answers), False)


FETCHING = [FetchPartition(A, 0, -1, 0, 1 << 20), FetchPartition(B, 0, -1, 0, 1 << 20)]


def test_a_fetch_with_enough_bytes_completes_at_once():
    async def scenario() -> None:
        log = Log()
        log.available[A] = b"x"
        fetch = DelayedFetch(500, 1, False, FETCHING, log.read)
        assert DelayedOperationPurgatory[TopicPartition]("Fetch").try_complete_else_watch(fetch)
        assert [a.records for a in await fetch.result()] == [b"x", b""]

    run(scenario())


def test_checks_in_one_turn_of_the_loop_cost_one_read():
    async def scenario() -> None:
        purgatory: DelayedOperationPurgatory[TopicPartition] = DelayedOperationPurgatory("Fetch")
        log = Log()
        fetch = DelayedFetch(100_000, 1, True, FETCHING, log.read)
        assert not purgatory.try_complete_else_watch(fetch)
        log.available[A] = log.available[B] = b"y"
        for tp in (A, B, A, B):
            assert purgatory.check_and_complete(tp) == 0  # the read waits for the loop's next turn
        answers = await fetch.result()
        assert log.reads == 2 and [a.records for a in answers] == [b"y", b"y"]
        assert purgatory.watched() == 0

    run(scenario())


@pytest.mark.parametrize(("from_follower", "reads"), [(True, 1), (False, 2)])
def test_at_expiry_a_follower_unwoken_keeps_its_read_and_a_consumer_reads_again(from_follower, reads):
    async def scenario() -> None:
        log = Log()
        fetch = DelayedFetch(20, 1, from_follower, FETCHING, log.read)
        DelayedOperationPurgatory[TopicPartition]("Fetch").try_complete_else_watch(fetch)
        await fetch.result()
        assert log.reads == reads

    run(scenario())


def test_a_woken_follower_fetch_reads_again_at_expiry():
    async def scenario() -> None:
        purgatory: DelayedOperationPurgatory[TopicPartition] = DelayedOperationPurgatory("Fetch")
        log = Log()
        fetch = DelayedFetch(30, 1, True, FETCHING, log.read)
        purgatory.try_complete_else_watch(fetch)
        purgatory.check_and_complete(A)  # woken: a HW moved, say, but no bytes yet
        await asyncio.sleep(0)
        assert log.reads == 2 and not fetch.is_completed
        await fetch.result()
        assert log.reads == 2  # nothing woke it since its last read

    run(scenario())

"""The controller's event queue: Kafka 2.8's `ControllerEventManagerTest`, case by case (each test named
after Kafka's), then kafkaops' own cases.

Kafka's cases check its metrics (rate and time per controller state, queue time), which kafkaops does
not have; each ported case checks what the metric stood for: the event was processed, in order, and its
end time recorded per event type (`processed_at`, what the benchmarks read). `testEventQueueTimeResetOnTimeout`
is not ported: there is no queue-time histogram to reset.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from kafkaops.cluster.controller.event_manager import ControllerEventManager
from kafkaops.cluster.controller.events import (
    AutoPreferredReplicaLeaderElection,
    BrokerChange,
    ControllerEvent,
    LeaderAndIsrResponseReceived,
    TopicChange,
)
from kafkaops.cluster.zk.values import TopicPartition


def wait_until(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.001)


@pytest.fixture
def managers() -> Iterator[list[ControllerEventManager]]:
    started: list[ControllerEventManager] = []
    yield started
    for manager in started:
        manager.close(timeout_s=5)


def start(managers: list[ControllerEventManager], process: Callable[[ControllerEvent], None]) -> ControllerEventManager:
    manager = ControllerEventManager(process, "controller-test-event-thread")
    managers.append(manager)
    manager.start()
    return manager


# --- Kafka's ControllerEventManagerTest ------------------------------------------------------------------


def test_metrics_cleaned_on_close(managers: list[ControllerEventManager]) -> None:
    """What close cleans here: the thread and the timers (a scheduled event never fires afterwards)."""
    processed: list[ControllerEvent] = []
    manager = start(managers, processed.append)
    manager.schedule(0.05, TopicChange())
    manager.close(timeout_s=5)
    assert not manager._thread.is_alive()
    time.sleep(0.1)
    manager.put(TopicChange())
    assert processed == [] and manager.queue_size() == 0


def test_event_without_rate_metrics(managers: list[ControllerEventManager]) -> None:
    processed: list[ControllerEvent] = []
    manager = start(managers, processed.append)
    event = LeaderAndIsrResponseReceived(1, ((TopicPartition("t", 0), 0),))
    manager.put(event)
    wait_until(lambda: len(processed) == 1)
    assert processed == [event]


def test_event_queue_time(managers: list[ControllerEventManager]) -> None:
    latch = threading.Event()
    processed: list[ControllerEvent] = []

    def process(event: ControllerEvent) -> None:
        latch.wait()
        processed.append(event)

    manager = start(managers, process)
    first, second = TopicChange(), TopicChange()
    manager.put(first)
    manager.put(second)
    latch.set()
    wait_until(lambda: len(processed) == 2)
    assert processed[0] is first and processed[1] is second
    assert "TopicChange" in manager.processed_at


def test_successful_event(managers: list[ControllerEventManager]) -> None:
    check(managers, AutoPreferredReplicaLeaderElection(0), lambda: None)


def test_event_that_throws_exception(managers: list[ControllerEventManager]) -> None:
    def fail() -> None:
        raise RuntimeError("a handler failed")

    manager = check(managers, BrokerChange(), fail)
    processed: list[ControllerEvent] = []
    manager._process = processed.append  # the loop survived: the next event is processed
    manager.put(TopicChange())
    wait_until(lambda: processed == [TopicChange()])


def check(
    managers: list[ControllerEventManager], event: ControllerEvent, func: Callable[[], None]
) -> ControllerEventManager:
    latch = threading.Event()
    entered = threading.Event()
    count = 0

    def process(processed: ControllerEvent) -> None:
        nonlocal count
        entered.set()
        latch.wait()  # return only once the test has seen the event being processed
        count += 1
        func()

    manager = start(managers, process)
    name = type(event).__name__
    manager.put(event)
    assert entered.wait(5)
    assert name not in manager.processed_at
    latch.set()
    wait_until(lambda: name in manager.processed_at)
    assert count == 1
    return manager


# --- kafkaops' own cases ---------------------------------------------------------------------------------


def test_scheduled_event_is_queued_after_its_delay(managers: list[ControllerEventManager]) -> None:
    processed: list[ControllerEvent] = []
    manager = start(managers, processed.append)
    manager.schedule(0.05, AutoPreferredReplicaLeaderElection(3))
    assert processed == []
    wait_until(lambda: processed == [AutoPreferredReplicaLeaderElection(3)])


def test_close_lets_queued_events_finish(managers: list[ControllerEventManager]) -> None:
    processed: list[ControllerEvent] = []
    latch = threading.Event()

    def process(event: ControllerEvent) -> None:
        latch.wait()
        processed.append(event)

    manager = start(managers, process)
    manager.put(TopicChange())
    manager.put(BrokerChange())
    latch.set()
    manager.close(timeout_s=5)
    assert processed == [TopicChange(), BrokerChange()]

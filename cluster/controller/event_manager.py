"""The controller's single event queue (Kafka's `ControllerEventManager`).

Every piece of controller state is owned by one thread, the one that runs `process`. ZooKeeper
watches (kazoo calls them on its own thread, where they must not block), timers and requests only
`put` small immutable events; the handler re-reads whatever it needs. A handler that raises is
logged and the loop goes on: one bad event must never stop the controller.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from kafkaops.cluster.controller.events import ControllerEvent

log = logging.getLogger("kafkaops.controller.events")


@dataclass(frozen=True)
class ShutdownEventThread:
    """Internal: stops the loop once every event queued before it has been processed."""


class ControllerEventManager:
    def __init__(self, process: Callable[[ControllerEvent], None], name: str = "controller-event-thread") -> None:
        self._process = process
        self._queue: queue.Queue[ControllerEvent | ShutdownEventThread] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._timers: set[threading.Timer] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.processed_at: dict[str, float] = {}
        """Monotonic end time of the last event handled, per event type name (benchmarks read it)."""

    def start(self) -> None:
        self._thread.start()

    def put(self, event: ControllerEvent) -> None:
        """Queue an event; safe from any thread, never blocks."""
        if not self._closed:
            self._queue.put(event)

    def schedule(self, delay_s: float, event: ControllerEvent) -> None:
        """Queue `event` after `delay_s` seconds (timers only enqueue, like watches)."""

        def fire() -> None:
            with self._lock:
                self._timers.discard(timer)
            self.put(event)

        timer = threading.Timer(delay_s, fire)
        timer.daemon = True
        with self._lock:
            if self._closed:
                return
            self._timers.add(timer)
        timer.start()

    def queue_size(self) -> int:
        return self._queue.qsize()

    def close(self, timeout_s: float = 30.0) -> None:
        """Stop timers, let queued events finish, and join the thread."""
        with self._lock:
            self._closed = True
            timers = list(self._timers)
            self._timers.clear()
        for timer in timers:
            timer.cancel()
        self._queue.put(ShutdownEventThread())
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout_s)

    def _run(self) -> None:
        while True:
            event = self._queue.get()
            if isinstance(event, ShutdownEventThread):
                return
            started = time.monotonic()
            try:
                self._process(event)
            except Exception:  # noqa: BLE001 - the loop must survive any handler failure
                log.exception("Error processing event %s", event)
            ended = self.processed_at[type(event).__name__] = time.monotonic()
            elapsed = ended - started
            if elapsed > 5:
                log.warning("Event %s took %.1f s", type(event).__name__, elapsed)

"""Waiting for a local cluster to get somewhere: one polling loop for the programs and tests that drive one
(the chaos runner, the benchmarks, the cluster tests), as Kafka's tests have `TestUtils.waitUntilTrue`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    condition: Callable[[], T], timeout_s: float = 20.0, interval_s: float = 0.1, what: str | None = None
) -> T:
    """Call `condition` every `interval_s` until it returns a true value, and return that value.

    Raises TimeoutError `not within <timeout_s>s: <what>` (without `what`: the last value it returned) once
    `timeout_s` has passed; whatever `condition` raises goes through. The sleep is `time.sleep`: call it from a
    thread that may block."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            shown = what if what is not None else f"condition not met (last value {value!r})"
            raise TimeoutError(f"not within {timeout_s:.0f}s: {shown}")
        time.sleep(interval_s)

"""The end of a broker process's shutdown: the loop's executor is drained (boundedly) before the logs close,
and the process exits without the interpreter's teardown, having flushed what it buffered."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from kafkaops.cluster.server.kafka_server import end_loop_work


def test_end_loop_work_cancels_the_tasks_and_waits_for_their_executor_jobs() -> None:
    finished = threading.Event()
    started = threading.Event()

    def job() -> None:  # a periodic checkpoint, say: cancelling its task does not stop it
        started.set()
        time.sleep(0.3)
        finished.set()

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        executor = ThreadPoolExecutor()
        loop.set_default_executor(executor)

        async def handler() -> None:
            await loop.run_in_executor(None, job)

        task = loop.create_task(handler())
        idle = loop.create_task(asyncio.sleep(60))
        while not started.is_set():
            await asyncio.sleep(0.005)
        await end_loop_work(executor, 10)
        assert finished.is_set(), "the logs would close under a job still running"
        assert task.cancelled() and idle.cancelled()

    asyncio.run(scenario())


def test_end_loop_work_leaves_a_stuck_job_behind_after_the_drain_time() -> None:
    release = threading.Event()

    async def scenario() -> float:
        loop = asyncio.get_running_loop()
        executor = ThreadPoolExecutor()
        loop.set_default_executor(executor)
        stuck = loop.run_in_executor(None, release.wait, 30)
        await asyncio.sleep(0.05)
        began = time.monotonic()
        try:
            await end_loop_work(executor, 0.2)
            return time.monotonic() - began
        finally:
            release.set()  # asyncio.run's own shutdown of the executor waits for it
            await stuck

    assert 0.15 < asyncio.run(scenario()) < 5


_EXITING = textwrap.dedent(
    """
    import atexit, logging, logging.handlers, sys
    from kafkaops.cluster.server.__main__ import exit_now

    # a handler that holds its records until it is flushed or closed
    logging.basicConfig(
        level=logging.INFO,
        handlers=[logging.handlers.MemoryHandler(100, target=logging.StreamHandler(sys.stderr))],
    )
    atexit.register(lambda: print("teardown ran"))
    print("buffered line")  # stdout is a pipe: block-buffered, lost by a bare os._exit
    logging.getLogger("kafkaops.broker").info("shut down")
    exit_now(3)
    """
)


def test_exit_now_flushes_what_is_buffered_and_skips_the_teardown() -> None:
    buffered = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    result = subprocess.run(
        [sys.executable, "-c", _EXITING], env=buffered, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 3, result.stderr
    assert result.stdout == "buffered line\n"
    assert result.stderr == "shut down\n"

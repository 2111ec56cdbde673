"""Process helpers for the local cluster's background servers (ZooKeeper, brokers)."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import time
from pathlib import Path


def alive(pid: int) -> bool:
    """True while `pid` runs; reaps it first if it is our exited child, so zombies count as gone."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def read_pid(pid_file: Path) -> int | None:
    """The pid in `pid_file` if that process is alive."""
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if alive(pid) else None


def stop(pid: int, sig: signal.Signals = signal.SIGTERM, timeout_s: float = 10.0) -> None:
    """Send `sig`, wait up to `timeout_s`, then SIGKILL; returns once the process is gone."""
    for current, wait_s in ((sig, timeout_s), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, current)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if not alive(pid):
                return
            time.sleep(0.05)
    raise OSError(f"process {pid} did not stop")


def stop_all(pids: list[int], sig: signal.Signals, timeout_s: float = 30.0) -> None:
    """Send `sig` to every process at once, wait up to `timeout_s` for all, then SIGKILL those left."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.05)
    for pid in pids:
        if alive(pid):
            stop(pid, signal.SIGKILL)


def raise_open_files_limit(wanted: int) -> int:
    """Raise RLIMIT_NOFILE (soft, and hard if allowed: root may) to `wanted`; returns the soft limit in effect.

    A log that has been written holds its active segment's descriptors open for its life, as Kafka's do, so a
    process hosting tens of thousands of written replicas needs more than a default limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= wanted:
        return soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, max(hard, wanted)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]

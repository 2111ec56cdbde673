"""py-spy on the local cluster's processes, for the benchmarks (`--profile DIR`), and a summary of what
it recorded: where a process's CPU time went, by function (self and inclusive), idle frames excluded."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path


def py_spy() -> Path:
    """The py-spy beside this interpreter; a clear error when it is not installed (it is in the `bench`
    extra, which `.ci/setup` does not install): the benches check before they build their cluster."""
    spy = Path(sys.executable).with_name("py-spy")
    if not spy.exists():
        raise SystemExit(f"--profile needs py-spy, not found at {spy}: pip install -e '.[bench]'")
    return spy


class Profiler:
    """py-spy record (raw collapsed stacks, idle frames and thread names kept) on a few processes."""

    def __init__(self, directory: Path, targets: dict[str, int], rate: int = 50) -> None:
        spy = py_spy()
        directory.mkdir(parents=True, exist_ok=True)
        self.outputs = {name: directory / f"{name}-{pid}.txt" for name, pid in targets.items()}
        self.runs = [
            subprocess.Popen(
                [
                    str(spy),
                    "record",
                    "--pid",
                    str(pid),
                    "--format",
                    "raw",
                    "--idle",
                    "--threads",
                    "--nonblocking",
                    "--rate",
                    str(rate),
                    "--output",
                    str(self.outputs[name]),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=open(directory / f"{name}-{pid}.log", "wb"),  # noqa: SIM115 - closed with the process
            )
            for name, pid in targets.items()
        ]

    def stop(self) -> None:
        for run in self.runs:
            if run.poll() is None:
                run.send_signal(signal.SIGINT)
        for run in self.runs:
            try:
                run.wait(30)
            except subprocess.TimeoutExpired:
                run.kill()
                run.wait()


IDLE_LEAVES = ("select (selectors.py", "poll (selectors.py", "wait (threading.py", "_worker (concurrent")


def busy_stacks(path: Path) -> Counter[tuple[str, ...]]:
    """The recorded stacks (outermost frame first) and their sample counts, stacks idle in a selector
    or a lock wait left out."""
    stacks: Counter[tuple[str, ...]] = Counter()
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = tuple(stack.split(";"))
        if frames[-1].startswith(IDLE_LEAVES) or "wait (threading.py" in frames[-1] or "get (queue.py" in stack:
            continue
        stacks[frames] += int(count)
    return stacks


def summary(path: Path, top: int = 25) -> str:
    """Busy samples by function: self (leaf) and inclusive (anywhere on the stack), the top `top` each."""
    stacks = busy_stacks(path)
    total = sum(stacks.values()) or 1
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    for frames, count in stacks.items():
        own[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
    lines = [f"{path.name}: {total} busy samples"]
    lines += ["  self:"] + [f"    {n / total:6.1%} {n:6d} {f}" for f, n in own.most_common(top)]
    lines += ["  inclusive:"] + [f"    {n / total:6.1%} {n:6d} {f}" for f, n in inclusive.most_common(top)]
    return "\n".join(lines)


if __name__ == "__main__":
    for argument in sys.argv[1:]:
        print(summary(Path(argument)))

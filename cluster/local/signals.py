"""A long-running program's own signal handling (the CLI's long commands, the chaos runner, the benchmarks).

A process inherits the signals its parent ignores: started in the background by a non-interactive shell,
by `nohup` or by some CI runners, it begins with SIGINT ignored, and Python, which installs its
KeyboardInterrupt handler only over the default disposition, then never raises KeyboardInterrupt: Ctrl-C
does nothing and whatever the program started runs on. So a program installs its handlers itself, first
thing, and turns both signals into exceptions that unwind its `finally` blocks (which stop its children);
it exits with the codes Kafka's JVM exits with: 130 on SIGINT, 143 on SIGTERM (128 + the signal).
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import NoReturn

EXIT_SIGINT = 128 + signal.SIGINT
EXIT_SIGTERM = 128 + signal.SIGTERM


def _exit_on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(EXIT_SIGTERM)


def install_signal_handlers() -> None:
    """SIGINT raises KeyboardInterrupt and SIGTERM SystemExit(143), whatever dispositions were inherited.

    Python runs handlers in the main thread only, and only from the main thread may they be installed."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _exit_on_sigterm)


def run_program(main: Callable[[], int | None]) -> NoReturn:
    """Run a script's `main` with its own handlers (`install_signal_handlers`); exit with what it returns,
    130 without a traceback on Ctrl-C (also one that cuts its clean-up short), 143 on SIGTERM."""
    install_signal_handlers()
    try:
        code = main()
    except KeyboardInterrupt:
        code = EXIT_SIGINT
    sys.exit(code)


def stop_started(started: list[Callable[[], None]]) -> None:
    """Stop what a program started, newest first, deaf from here on to a second Ctrl-C or SIGTERM, which must
    not cut the clean-up short and leave processes behind; one stop failing does not keep the others."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for stop in reversed(started):
        with contextlib.suppress(Exception):
            stop()

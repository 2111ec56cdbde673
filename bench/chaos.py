"""The chaos runner's command (issue 8): acknowledged records survive faults, replicas agree, intents complete.

    .venv/bin/python bench/chaos.py --seed 1 --duration 1800 [--brokers 3..5] [--state-dir DIR]
                                    [--security plaintext|ssl|sasl_plaintext|sasl_ssl]

The runner is the package `bench/chaos_runner/`; its docstring says what a run does, checks and reports.
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/ is not an installed package: run as a script, this file finds the runner from the repository's root
# (as the tests do, which import `bench.chaos_runner.workload`)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.chaos_runner.runner import main  # noqa: E402 - after the path it is found on

if __name__ == "__main__":
    sys.exit(main())

"""The `kafkaops` console script: `kafkaops --version` answers before Typer is imported (a third of a
start-up's time); everything else goes to the Typer application (`cli/app.py`)."""

from __future__ import annotations

import sys


def version_text() -> str:
    from importlib import metadata  # imports email and zipfile: only for the version

    return f"kafkaops {metadata.version('kafkaops')} (Kafka 2.8 ZooKeeper-mode tools)"


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        print(version_text())
        return
    from kafkaops.cli.app import main as run_app

    run_app()

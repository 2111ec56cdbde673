"""`kafkaops cluster`: run a local ZooKeeper (and, as the cluster grows, its brokers)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from kafkaops.cli.common import state_dir
from kafkaops.cli.demo import demo_command
from kafkaops.cli.output import OutputFormat, kafka_errors, print_json
from kafkaops.cluster.local.zookeeper import DEFAULT_PORT, LocalZooKeeper

app = typer.Typer(help="Run a local cluster.", no_args_is_help=True, rich_markup_mode=None)
zookeeper_app = typer.Typer(
    help="The local ZooKeeper (Debian's zookeeper package), on 127.0.0.1.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(zookeeper_app, name="zookeeper")
app.command("demo")(demo_command)

StateDir = Annotated[
    Path | None,
    typer.Option(
        "--state-dir", help="Where the local cluster keeps its data (default $KAFKAOPS_STATE_DIR or ~/.kafkaops)."
    ),
]


Output = Annotated[OutputFormat, typer.Option("--output", help="text, or json: one JSON document.")]


def _report(zk: LocalZooKeeper, output: OutputFormat, text: str, **facts: object) -> None:
    if output is OutputFormat.json:
        print_json({"connect": zk.connect_string, "pid": zk.pid(), "state_dir": str(zk.state_dir), **facts})
    else:
        sys.stdout.write(text + "\n")


def _local(state: Path | None, port: int | None = None) -> LocalZooKeeper:
    zk = LocalZooKeeper.from_state_dir(state_dir(state))
    if port is not None:
        zk.port = port
    return zk


@zookeeper_app.command("start")
@kafka_errors()
def zookeeper_start(
    state: StateDir = None,
    port: Annotated[
        int | None, typer.Option("--port", help=f"Client port (default {DEFAULT_PORT}, or the last one used).")
    ] = None,
    output: Output = OutputFormat.text,
) -> None:
    """Start ZooKeeper and wait until it answers `ruok`."""
    zk = _local(state, port)
    started = zk.start()
    verb = "Started" if started else "Already running:"
    _report(zk, output, f"{verb} ZooKeeper at {zk.connect_string} (pid {zk.pid()}, data in {zk.home})", started=started)


@zookeeper_app.command("stop")
@kafka_errors()
def zookeeper_stop(state: StateDir = None, output: Output = OutputFormat.text) -> None:
    """Stop the local ZooKeeper."""
    zk = _local(state)
    stopped = zk.stop()
    text = f"Stopped ZooKeeper at {zk.connect_string}" if stopped else "ZooKeeper is not running"
    _report(zk, output, text, stopped=stopped)


@zookeeper_app.command("status")
@kafka_errors()
def zookeeper_status(state: StateDir = None, output: Output = OutputFormat.text) -> None:
    """Print ZooKeeper's `srvr` answer; exit 1 if it does not answer."""
    zk = _local(state)
    answer = zk.status()
    if answer is None:
        _report(zk, output, f"ZooKeeper at {zk.connect_string} is not running", running=False)
        raise typer.Exit(code=1)
    _report(
        zk, output, f"ZooKeeper at {zk.connect_string} (pid {zk.pid()})\n{answer.rstrip()}", running=True, srvr=answer
    )

"""`kafkaops cluster`: run a local cluster: ZooKeeper and broker processes."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Annotated

import typer

from kafkaops.cli.common import state_dir
from kafkaops.cli.demo import demo_command
from kafkaops.cli.output import OutputFormat, kafka_errors, print_json, print_lines
from kafkaops.cluster.local.cluster import ClusterStatus, LocalCluster
from kafkaops.cluster.local.security import SECURITY_MODES
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


# --- brokers -------------------------------------------------------------------------------------


def _status_document(status: ClusterStatus) -> dict[str, object]:
    return {**dataclasses.asdict(status), "bootstrap_servers": status.bootstrap_servers}


def _security_lines(local: LocalCluster) -> list[str]:
    """How to reach a secured cluster: its client properties, for the tools and for other Kafka clients."""
    properties = local.client_properties
    if properties is None:
        return []
    settings = dict(
        line.split("=", 1) for line in properties.read_text().splitlines() if "=" in line and not line.startswith("#")
    )
    lines = [
        f"Security: {local.security} (every listener, inter-broker included, uses {settings.get('security.protocol')})",
        f"Client properties: {properties}",
        "  the kafkaops tools use them for this cluster; give them to Kafka's tools with --command-config "
        f"{properties}",
    ]
    flags = [f"-X security.protocol={settings.get('security.protocol')}"]
    if "ssl.truststore.location" in settings:
        flags.append(f"-X ssl.ca.location={settings['ssl.truststore.location']}")
    if "sasl.jaas.config" in settings:
        from kafkaops.cluster.common.sasl import client_login

        login = client_login(settings.get("sasl.mechanism", ""), settings["sasl.jaas.config"])
        flags += [f"-X sasl.mechanisms={login.mechanism}", f"-X sasl.username={login.username}"]
        flags.append(f"-X sasl.password={login.password}")
        lines.append(
            f"  SASL user '{login.username}' ({login.mechanism}, also the brokers' own login); more users: "
            "kafkaops configs --alter --entity-type users --entity-name <user> "
            "--add-config 'SCRAM-SHA-512=[password=<password>]'"
        )
    lines.append("  librdkafka (kcat, confluent-kafka): " + " ".join(flags))
    return lines


def _print_status(status: ClusterStatus, output: OutputFormat, local: LocalCluster | None = None) -> None:
    if output is OutputFormat.json:
        document = _status_document(status)
        if local is not None and local.client_properties is not None:
            document["security"] = local.security
            document["client_properties"] = str(local.client_properties)
        print_json(document)
        return
    serving = "serving" if status.zookeeper_serving else "NOT answering"
    lines = [f"ZooKeeper {status.zookeeper} {serving}"]
    if status.controller_id is not None:
        lines.append(f"Controller: broker {status.controller_id} (epoch {status.controller_epoch})")
    else:
        lines.append("Controller: none")
    for broker in status.brokers:
        state = "registered" if broker.registered else "not registered"
        pid = f"pid {broker.pid}" if broker.pid else "not running"
        lines.append(f"Broker {broker.broker_id}: {state}, {pid}" + (f", {broker.endpoint}" if broker.endpoint else ""))
    # the values to paste into the tools' options (or leave them out: the tools find this state dir's cluster)
    lines.append(f"--zookeeper {status.zookeeper}")
    if status.bootstrap_servers:
        lines.append(f"--bootstrap-server {status.bootstrap_servers}")
    if local is not None:
        lines += _security_lines(local)
    print_lines(lines)


@app.command("up")
@kafka_errors()
def cluster_up(
    state: StateDir = None,
    brokers: Annotated[
        int,
        typer.Option(
            "--brokers",
            min=1,
            help="How many brokers a new cluster gets (an existing one restarts the brokers it holds: grow it with add-broker).",
        ),
    ] = 3,
    zookeeper_connect: Annotated[
        str | None, typer.Option("--zookeeper", help="Use this ZooKeeper instead of starting a local one.")
    ] = None,
    security: Annotated[
        str | None,
        typer.Option(
            "--security",
            metavar="|".join(SECURITY_MODES),
            help="A new cluster's security: every listener, inter-broker included, uses it. ssl creates a CA and "
            "the brokers' certificates, sasl_* an admin user (SCRAM-SHA-512), and <state dir>/client.properties "
            "for the tools (default plaintext; an existing cluster keeps its own).",
        ),
    ] = None,
    output: Output = OutputFormat.text,
) -> None:
    """Start ZooKeeper (unless --zookeeper) and the brokers; return once a controller is elected."""
    local = LocalCluster(state_dir(state))
    status = local.up(brokers=brokers, zookeeper_connect=zookeeper_connect, security=security)
    _print_status(status, output, local)


@app.command("status")
@kafka_errors()
def cluster_status(state: StateDir = None, output: Output = OutputFormat.text) -> None:
    """ZooKeeper, brokers, controller id and epoch."""
    local = LocalCluster(state_dir(state))
    _print_status(local.status(), output, local)


@app.command("stop-broker")
@kafka_errors()
def stop_broker(
    broker_id: Annotated[int, typer.Argument(help="The broker id.")],
    hard: Annotated[bool, typer.Option("--hard", help="SIGKILL instead of a controlled shutdown (SIGTERM).")] = False,
    state: StateDir = None,
) -> None:
    """Stop one broker: controlled shutdown by default, SIGKILL with --hard."""
    stopped = LocalCluster(state_dir(state)).stop_broker(broker_id, hard=hard)
    print_lines([f"Broker {broker_id} {'stopped' if stopped else 'was not running'}"])


@app.command("start-broker")
@kafka_errors()
def start_broker(broker_id: Annotated[int, typer.Argument(help="The broker id.")], state: StateDir = None) -> None:
    """Start one broker of the local cluster again."""
    pid = LocalCluster(state_dir(state)).start_broker(broker_id)
    print_lines([f"Broker {broker_id} running (pid {pid})"])


@app.command("add-broker")
@kafka_errors()
def add_broker(
    rack: Annotated[str | None, typer.Option("--rack", help="The new broker's broker.rack.")] = None,
    broker_id: Annotated[
        int | None, typer.Option("--id", help="The new broker's id (default: one past the highest known).")
    ] = None,
    state: StateDir = None,
) -> None:
    """Add a broker to the local cluster (a free port, its own dirs, the cluster's ZooKeeper); start it and wait
    until it is registered."""
    local = LocalCluster(state_dir(state))
    added = local.add_broker(rack=rack, broker_id=broker_id)
    endpoint = next((b.endpoint for b in local.status().brokers if b.broker_id == added and b.endpoint), None)
    print_lines([f"Broker {added} running (pid {local.broker_pid(added)})" + (f", {endpoint}" if endpoint else "")])


@app.command("remove-broker")
@kafka_errors()
def remove_broker(broker_id: Annotated[int, typer.Argument(help="The broker id.")], state: StateDir = None) -> None:
    """Stop a drained broker (controlled shutdown) and delete its directories; refused while ZooKeeper still
    assigns it replicas."""
    local = LocalCluster(state_dir(state))
    local.remove_broker(broker_id)
    print_lines([f"Broker {broker_id} removed ({local.broker_dir(broker_id)} deleted)"])


@app.command("down")
@kafka_errors()
def cluster_down(state: StateDir = None) -> None:
    """Stop every broker the state dir holds, all at once and without controlled shutdowns (nobody stays up to
    take over their leaderships), then the ZooKeeper this cluster started."""
    LocalCluster(state_dir(state)).down()
    print_lines(["Cluster stopped"])


@app.command("broker")
def broker(config: Annotated[Path, typer.Option("--config", help="broker.yaml with Kafka's property names.")]) -> None:
    """Run one broker in the foreground until SIGTERM (controlled shutdown) or SIGINT."""
    from kafkaops.cluster.server.__main__ import main

    raise typer.Exit(code=main(["--config", str(config)]))

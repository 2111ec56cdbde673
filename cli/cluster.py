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
from kafkaops.cluster.common.errors import UsageError, UserError
from kafkaops.cluster.local import sasl_setup as local_security
from kafkaops.cluster.local.cluster import ClusterStatus, LocalCluster
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


def _print_status(status: ClusterStatus, output: OutputFormat) -> None:
    if output is OutputFormat.json:
        print_json(_status_document(status))
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
        str,
        typer.Option(
            "--security",
            help="plaintext, or sasl_plaintext: every listener (inter-broker too) SASL with SCRAM-SHA-512; an admin "
            "user is created and its client settings written to <state dir>/client.properties. A new cluster only.",
        ),
    ] = local_security.PLAINTEXT,
    output: Output = OutputFormat.text,
) -> None:
    """Start ZooKeeper (unless --zookeeper) and the brokers; return once a controller is elected."""
    local = LocalCluster(state_dir(state))
    if security not in local_security.SECURITY_CHOICES:
        raise UsageError(f"--security must be one of {', '.join(local_security.SECURITY_CHOICES)}, not {security}")
    existing = local.broker_overrides if local.exists() else None
    if (
        existing is not None
        and local_security.security_of(existing) != security
        and security != local_security.PLAINTEXT
    ):
        raise UserError(
            f"The cluster in {local.state_dir} was created with --security {local_security.security_of(existing)}: "
            "its security does not change on restart"
        )
    if existing is not None:
        security = local_security.security_of(existing)
        password = local_security.admin_password_of(existing, security)
        status = local.up(brokers=brokers, zookeeper_connect=zookeeper_connect)
    elif security == local_security.PLAINTEXT:
        password = None
        status = local.up(brokers=brokers, zookeeper_connect=zookeeper_connect)
    else:
        password = local_security.new_password()
        status = local.up(
            brokers=brokers,
            zookeeper_connect=zookeeper_connect,
            broker_overrides=local_security.broker_overrides(security, password),
            before_brokers=lambda connect: local_security.create_scram_user(
                connect, local_security.ADMIN_USER, password, local_security.ADMIN_MECHANISM
            ),
        )
    _print_status(status, output)
    if password is not None and output is OutputFormat.text:
        properties = local_security.client_properties(security, password)
        path = local_security.write_client_properties(local.state_dir, properties)
        print_lines(_security_usage(security, path, status.bootstrap_servers or "", password))


def _security_usage(security: str, properties: Path, bootstrap: str, password: str) -> list[str]:
    """How to reach a secured local cluster: the admin user, its client properties, a tool and kcat."""
    user, mechanism = local_security.ADMIN_USER, local_security.ADMIN_MECHANISM.mechanism_name
    protocol = local_security.listener_name(security)
    return [
        f"Security: {protocol} on every listener, {mechanism} between brokers as user '{user}'",
        f"Admin client settings (user '{user}', {mechanism}): {properties}",
        f"  kafkaops topics --bootstrap-server {bootstrap} --command-config {properties} --list",
        f"  kcat -b {bootstrap} -X security.protocol={protocol} -X sasl.mechanisms={mechanism} "
        f"-X sasl.username={user} -X sasl.password={password} -L",
        "New users: kafkaops configs --alter --entity-type users --entity-name <user> "
        "--add-config 'SCRAM-SHA-512=[password=<password>]'",
    ]


@app.command("status")
@kafka_errors()
def cluster_status(state: StateDir = None, output: Output = OutputFormat.text) -> None:
    """ZooKeeper, brokers, controller id and epoch."""
    _print_status(LocalCluster(state_dir(state)).status(), output)


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

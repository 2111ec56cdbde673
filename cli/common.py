"""Where the CLI finds its ZooKeeper, its brokers and its state directory: one resolver for every tool."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kafkaops.cluster.common.errors import InvalidArgumentError, UserError
from kafkaops.cluster.zk.acls import DigestCredentials
from kafkaops.cluster.zk.client import KafkaZkClient

if TYPE_CHECKING:
    from kafkaops.admin.kafka_client.client import KafkaClient
    from kafkaops.admin.kafka_client.client_config import AdminClientConfig
    from kafkaops.cluster.local.cluster import LocalCluster

ZookeeperOption = Annotated[
    str | None,
    typer.Option(
        "--zookeeper",
        metavar="<hosts>",
        help="The connection string for the zookeeper connection in the form host:port. Multiple hosts can be "
        "given to allow fail-over. Default: $KAFKAOPS_ZOOKEEPER, the config file, then the local cluster.",
    ),
]
BootstrapServerOption = Annotated[
    str | None,
    typer.Option(
        "--bootstrap-server",
        metavar="<server to connect to>",
        help="The Kafka server(s) to connect to, host:port[,host:port...]: the tool then speaks the Admin API "
        "(any Kafka broker 2.4+, or ours) instead of writing to ZooKeeper.",
    ),
]
CommandConfigOption = Annotated[
    str | None,
    typer.Option(
        "--command-config",
        metavar="<command config property file>",
        help="Property file containing configs to be passed to Admin Client (client.id, request.timeout.ms, "
        "default.api.timeout.ms, retries, retry.backoff.ms; security.protocol PLAINTEXT or SSL with the PEM ssl.* "
        "settings). Used only with --bootstrap-server; default: a secured local cluster's client.properties.",
    ),
]
StateDirOption = Annotated[
    Path | None,
    typer.Option(
        "--state-dir",
        metavar="<dir>",
        help="A local cluster's state dir (`kafkaops cluster up --state-dir`): its ZooKeeper and brokers are used "
        "when --zookeeper / --bootstrap-server are left out. Default: $KAFKAOPS_STATE_DIR, then ~/.kafkaops.",
    ),
]

ONLY_ONE_CONNECTION = "Only one of --bootstrap-server or --zookeeper must be specified"


def check_connection(zookeeper_connect: str | None, bootstrap_server: str | None) -> None:
    """Kafka's tools refuse both connections at once (`--zookeeper` may still default when neither is given)."""
    if zookeeper_connect is not None and bootstrap_server is not None:
        raise InvalidArgumentError(ONLY_ONE_CONNECTION)


def command_config_for(
    bootstrap_server: str, command_config: str | Path | None, state: Path | None = None
) -> str | Path | None:
    """`--command-config`, else the local cluster's `<state dir>/client.properties` when every server of
    `--bootstrap-server` is one of that cluster's listeners (`cluster up --security ssl` writes it): the
    tools reach a secured local cluster without being told how."""
    if command_config is not None:
        return command_config
    local = local_cluster(state_dir(state))
    properties = local.client_properties
    if properties is None:
        return None
    wanted = {address.strip() for address in bootstrap_server.split(",") if address.strip()}
    return properties if wanted and wanted <= local.listener_addresses() else None


@contextmanager
def admin_client(
    bootstrap_server: str, command_config: str | Path | None, default_client_id: str, state: Path | None = None
) -> Iterator[tuple[KafkaClient, AdminClientConfig]]:
    """A client on `--bootstrap-server` configured by `--command-config` (or the local cluster's client
    properties, `command_config_for`), closed on exit, with its settings (the admin calls' timeouts). Raises
    InvalidArgumentError for a bad file or server list."""
    # the Kafka client (and the protocol's schemas) only for --bootstrap-server: a ZooKeeper-mode command
    # starts without them
    from kafkaops.admin.kafka_client.client_config import open_admin_client, read_command_config

    config = read_command_config(command_config_for(bootstrap_server, command_config, state), default_client_id)
    with open_admin_client(bootstrap_server, config) as client:
        yield client, config


ENV_ZOOKEEPER = "KAFKAOPS_ZOOKEEPER"
ENV_CONFIG = "KAFKAOPS_CONFIG"
ENV_STATE_DIR = "KAFKAOPS_STATE_DIR"
ENV_ZK_TIMEOUT_MS = "KAFKAOPS_ZK_TIMEOUT_MS"
ENV_ZK_DIGEST = "KAFKAOPS_ZK_DIGEST"
CONFIG_FILE_NAME = "kafkaops.yaml"


def local_cluster(state: Path) -> LocalCluster:
    """The local cluster in `state`, imported on first use: a tool given its connection starts without the
    local cluster's code (and YAML)."""
    from kafkaops.cluster.local.cluster import LocalCluster

    return LocalCluster(state)


def state_dir(explicit: Path | None = None) -> Path:
    """`--state-dir`, else `$KAFKAOPS_STATE_DIR`, else `~/.kafkaops`."""
    if explicit is not None:
        return explicit
    return Path(os.environ.get(ENV_STATE_DIR) or Path.home() / ".kafkaops")


def _tools_config() -> dict[str, Any]:
    """The tools' YAML config file (`$KAFKAOPS_CONFIG`, else `<state-dir>/kafkaops.yaml`), if any."""
    config_path = Path(os.environ.get(ENV_CONFIG) or state_dir() / CONFIG_FILE_NAME)
    if not config_path.exists():
        return {}
    import yaml

    try:
        config = yaml.safe_load(config_path.read_text()) or {}
    except yaml.YAMLError as error:
        raise InvalidArgumentError(f"Cannot read {config_path}: {error}") from None
    if not isinstance(config, dict):
        raise InvalidArgumentError(f"Cannot read {config_path}: not a YAML mapping")
    return config


def _start_hint(state: Path) -> str:
    default = state == state_dir()
    return f"`kafkaops cluster up{'' if default else f' --state-dir {state}'}`"


def no_local_cluster(state: Path, flag: str) -> UserError:
    """The answer, at once, of a tool that has nothing to connect to: which state dir it looked at, and what
    to do. One text for every tool."""
    local = local_cluster(state)
    if local.exists() and flag == "--zookeeper":
        found = f"the local cluster in {state} is not running (its ZooKeeper {local.zookeeper_connect} does not answer)"
    elif local.exists():
        found = f"no broker of the local cluster in {state} is running"
    else:
        found = f"there is no local cluster in {state}"
    return UserError(f"No {flag} given and {found}: start one with {_start_hint(state)}, or pass {flag} <host:port>")


def find_zookeeper(flag: str | None, state: Path | None = None) -> str | None:
    """The ZooKeeper connect string a tool uses, or None if there is none:

    1. `--zookeeper`;
    2. `--state-dir`: that local cluster's ZooKeeper, if it answers;
    3. `$KAFKAOPS_ZOOKEEPER`;
    4. `zookeeper.connect` of the tools' YAML config file (`$KAFKAOPS_CONFIG`, else `<state-dir>/kafkaops.yaml`);
    5. the local cluster of `$KAFKAOPS_STATE_DIR` (else `~/.kafkaops`), if its ZooKeeper answers (that of
       `kafkaops cluster up`, else the one `kafkaops cluster zookeeper start` runs there)."""
    if flag:
        return flag
    if state is not None:
        return local_cluster(state).running_zookeeper()
    if os.environ.get(ENV_ZOOKEEPER):
        return os.environ[ENV_ZOOKEEPER]
    config = _tools_config()
    if config.get("zookeeper.connect"):
        return str(config["zookeeper.connect"])
    return local_cluster(state_dir()).running_zookeeper()


def resolve_zookeeper(flag: str | None, state: Path | None = None) -> str:
    """`find_zookeeper`, or a UserError saying, at once, that there is no local cluster to use."""
    found = find_zookeeper(flag, state)
    if found is None:
        raise no_local_cluster(state_dir(state), "--zookeeper")
    return found


def find_bootstrap_server(flag: str | None, state: Path | None = None) -> str | None:
    """The brokers a `--bootstrap-server` tool uses, or None: the flag, else the running brokers of the local
    cluster in `--state-dir` (else `$KAFKAOPS_STATE_DIR`, else `~/.kafkaops`)."""
    if flag:
        return flag
    return local_cluster(state_dir(state)).running_bootstrap_servers()


def resolve_bootstrap_server(flag: str | None, state: Path | None = None) -> str:
    """`find_bootstrap_server`, or a UserError saying, at once, that there is no local cluster to use."""
    found = find_bootstrap_server(flag, state)
    if found is None:
        raise no_local_cluster(state_dir(state), "--bootstrap-server")
    return found


def optional_bootstrap_server(state: Path | None, flag: str = "--bootstrap-server") -> str | None:
    """For the tools whose broker flag Kafka requires (the console tools, replica-verification): the local
    cluster's running brokers when the flag is left out; None (the tool then answers Kafka's "Missing required
    argument") unless `--state-dir` was given, whose cluster must be running."""
    if state is not None:
        found = find_bootstrap_server(None, state)
        if found is None:
            raise no_local_cluster(state, flag)
        return found
    return find_bootstrap_server(None)


def optional_zookeeper(state: Path | None, flag: str = "--zookeeper") -> str | None:
    """As `optional_bootstrap_server`, for a tool whose ZooKeeper flag Kafka requires
    (zookeeper-security-migration's --zookeeper.connect): `find_zookeeper`'s chain."""
    found = find_zookeeper(None, state)
    if found is None and state is not None:
        raise no_local_cluster(state, flag)
    return found


def zookeeper_credentials() -> DigestCredentials | None:
    """The tools' ZooKeeper identity: `$KAFKAOPS_ZK_DIGEST`, then `zookeeper.digest` of the config file
    (`user:password`). With one, the tools create znodes as the cluster's brokers do with
    `zookeeper.set.acl` (Kafka's tools secure them whenever a JAAS login is configured)."""
    if os.environ.get(ENV_ZK_DIGEST):
        return DigestCredentials.parse(os.environ[ENV_ZK_DIGEST], ENV_ZK_DIGEST)
    value = _tools_config().get("zookeeper.digest")
    return DigestCredentials.parse(str(value), "zookeeper.digest") if value else None


def connection_timeout_ms() -> int:
    try:
        return int(os.environ.get(ENV_ZK_TIMEOUT_MS, "15000"))
    except ValueError:
        raise InvalidArgumentError(f"{ENV_ZK_TIMEOUT_MS} must be a number of milliseconds") from None


@contextmanager
def zookeeper(flag: str | None, state: Path | None = None) -> Iterator[KafkaZkClient]:
    """A Kafka ZooKeeper client on the resolved connect string (`resolve_zookeeper`), closed on exit."""
    from kafkaops.cluster.zk.client import connect

    connect_string = resolve_zookeeper(flag, state)
    credentials = zookeeper_credentials()
    with connect(
        connect_string,
        connection_timeout_ms=connection_timeout_ms(),
        credentials=credentials,
        set_acl=credentials is not None,
    ) as client:
        yield client

"""Where the CLI finds its ZooKeeper and state directory."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.kafka_client.client_config import AdminClientConfig, load_command_config, open_admin_client
from kafkaops.cluster.common.errors import InvalidArgumentError
from kafkaops.cluster.local.zookeeper import LocalZooKeeper
from kafkaops.cluster.zk.acls import DigestCredentials
from kafkaops.cluster.zk.client import KafkaZkClient

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
        "default.api.timeout.ms, retries, retry.backoff.ms; security.protocol PLAINTEXT). "
        "Used only with --bootstrap-server.",
    ),
]

ONLY_ONE_CONNECTION = "Only one of --bootstrap-server or --zookeeper must be specified"


def check_connection(zookeeper_connect: str | None, bootstrap_server: str | None) -> None:
    """Kafka's tools refuse both connections at once (`--zookeeper` may still default when neither is given)."""
    if zookeeper_connect is not None and bootstrap_server is not None:
        raise InvalidArgumentError(ONLY_ONE_CONNECTION)


@contextmanager
def admin_client(
    bootstrap_server: str, command_config: str | Path | None, default_client_id: str
) -> Iterator[tuple[KafkaClient, AdminClientConfig]]:
    """A client on `--bootstrap-server` configured by `--command-config`, closed on exit, with its
    settings (the admin calls' timeouts). Raises InvalidArgumentError for a bad file or server list."""
    config = load_command_config(command_config, default_client_id)
    with open_admin_client(bootstrap_server, config) as client:
        yield client, config


def refuse_bootstrap_server(command: str, alternatives: str = "") -> InvalidArgumentError:
    """Kafka's AdminClient mode has no equivalent here: every kafkaops tool works through ZooKeeper."""
    return InvalidArgumentError(
        f"kafkaops {command} works through ZooKeeper: use --zookeeper (or leave it out for the local cluster"
        f"{alternatives}) instead of --bootstrap-server"
    )


ENV_ZOOKEEPER = "KAFKAOPS_ZOOKEEPER"
ENV_CONFIG = "KAFKAOPS_CONFIG"
ENV_STATE_DIR = "KAFKAOPS_STATE_DIR"
ENV_ZK_TIMEOUT_MS = "KAFKAOPS_ZK_TIMEOUT_MS"
ENV_ZK_DIGEST = "KAFKAOPS_ZK_DIGEST"
CONFIG_FILE_NAME = "kafkaops.yaml"


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
    try:
        config = yaml.safe_load(config_path.read_text()) or {}
    except yaml.YAMLError as error:
        raise InvalidArgumentError(f"Cannot read {config_path}: {error}") from None
    if not isinstance(config, dict):
        raise InvalidArgumentError(f"Cannot read {config_path}: not a YAML mapping")
    return config


def resolve_zookeeper(flag: str | None) -> str:
    """The connect string: `--zookeeper`, then `$KAFKAOPS_ZOOKEEPER`, then `zookeeper.connect` of the
    YAML config file (`$KAFKAOPS_CONFIG`, else `<state-dir>/kafkaops.yaml`), then the local ZooKeeper
    that `kafkaops cluster zookeeper start` runs in the state dir."""
    if flag:
        return flag
    if os.environ.get(ENV_ZOOKEEPER):
        return os.environ[ENV_ZOOKEEPER]
    config = _tools_config()
    if config.get("zookeeper.connect"):
        return str(config["zookeeper.connect"])
    return LocalZooKeeper.from_state_dir(state_dir()).connect_string


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
def zookeeper(flag: str | None) -> Iterator[KafkaZkClient]:
    """A Kafka ZooKeeper client on the resolved connect string, closed on exit."""
    from kafkaops.cluster.zk.client import connect

    credentials = zookeeper_credentials()
    with connect(
        resolve_zookeeper(flag),
        connection_timeout_ms=connection_timeout_ms(),
        credentials=credentials,
        set_acl=credentials is not None,
    ) as client:
        yield client

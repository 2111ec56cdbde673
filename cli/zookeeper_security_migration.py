"""`kafkaops zookeeper-security-migration`: Kafka's `zookeeper-security-migration.sh` (ZkSecurityMigrator).

Kafka's options (`--zookeeper.acl secure|unsecure`, `--zookeeper.connect`, timeouts); the credentials are
the tools' (`$KAFKAOPS_ZK_DIGEST` or `zookeeper.digest` in the config file) instead of a JAAS file.
"""

from __future__ import annotations

from typing import Annotated

import typer

from kafkaops.admin.zk_security import migrate
from kafkaops.cli.common import StateDirOption, optional_zookeeper, zookeeper_credentials
from kafkaops.cli.output import kafka_errors
from kafkaops.cluster.common.errors import UsageError
from kafkaops.cluster.zk.client import connect

USAGE = (
    "ZooKeeper Migration Tool Help. This tool updates the ACLs of znodes as part of the process of setting up "
    "ZooKeeper authentication."
)


@kafka_errors()
def zookeeper_security_migration_command(
    ctx: typer.Context,
    zookeeper_acl: Annotated[
        str | None,
        typer.Option(
            "--zookeeper.acl",
            metavar="<String>",
            help="Indicates whether to make the Kafka znodes in ZooKeeper secure or unsecure. "
            "The options are 'secure' and 'unsecure'",
        ),
    ] = None,
    zookeeper_connect: Annotated[
        str | None,
        typer.Option(
            "--zookeeper.connect",
            metavar="<String>",
            help="Sets the ZooKeeper connect string (ensemble). This parameter takes a comma-separated "
            "list of host:port pairs.",
        ),
    ] = None,
    session_timeout_ms: Annotated[
        int,
        typer.Option("--zookeeper.session.timeout", metavar="<Integer>", help="Sets the ZooKeeper session timeout."),
    ] = 30000,
    connection_timeout_ms: Annotated[
        int,
        typer.Option(
            "--zookeeper.connection.timeout", metavar="<Integer>", help="Sets the ZooKeeper connection timeout."
        ),
    ] = 30000,
    state: StateDirOption = None,
) -> None:
    """ZooKeeper Migration Tool Help. This tool updates the ACLs of znodes as part of the process of setting up
    ZooKeeper authentication."""
    if zookeeper_acl not in ("secure", "unsecure"):
        raise UsageError(USAGE)
    zookeeper_connect = zookeeper_connect or optional_zookeeper(state, "--zookeeper.connect")
    if not zookeeper_connect:
        raise UsageError(USAGE)
    credentials = zookeeper_credentials()
    secure = zookeeper_acl == "secure"
    with connect(
        zookeeper_connect,
        connection_timeout_ms=connection_timeout_ms,
        session_timeout_ms=session_timeout_ms,
        credentials=credentials,  # the migration sets every ACL itself; it creates nothing
    ) as zk:
        result = migrate(zk, secure)
    typer.echo(f"Set {zookeeper_acl} ACLs on {result.znodes} znodes.")

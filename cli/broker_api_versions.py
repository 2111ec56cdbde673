"""`kafkaops broker-api-versions`: Kafka 2.8's kafka-broker-api-versions.sh (BrokerApiVersionsCommand).

Per broker `host:port (id: N rack: R) -> (` then one API per line as Kafka's `NodeApiVersions` prints it
(`Produce(0): 3 to 9 [usable: 8]`, where "usable" is the highest version this client and the broker share,
`UNSUPPORTED` for a ZooKeeper-broker API the broker does not serve), then `)`. A broker that cannot be
asked prints `-> ERROR: <why>`. No bootstrap server answering prints Kafka's "Request METADATA failed on
brokers ..." and exits 1. Without --bootstrap-server, the running brokers of the local cluster
(`--state-dir`). `--command-config` may ask for PLAINTEXT or SSL (not SASL yet); without one, a secured
local cluster's client.properties is used for its brokers.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from typer._click.core import ParameterSource  # Typer vendors click

from kafkaops.admin.broker_api_versions import BrokerVersionInfo, list_all_broker_version_info
from kafkaops.admin.kafka_client.client_config import client_from_properties, load_command_config
from kafkaops.admin.kafka_client.node_api_versions import node_api_versions_text
from kafkaops.cli.common import StateDirOption, command_config_for, optional_bootstrap_server
from kafkaops.cli.output import kafka_errors
from kafkaops.cluster.common.errors import UsageError
from kafkaops.cluster.protocol.schemas import SUPPORTED_VERSIONS

DESCRIPTION = "This tool helps to retrieve broker version information."
CLIENT_ID = "admin-1"


def broker_line(info: BrokerVersionInfo) -> str:
    if info.versions is None:
        return f"{info.node_text} -> ERROR: {info.error}"
    ours = {int(key): versions for key, versions in SUPPORTED_VERSIONS.items()}
    return f"{info.node_text} -> {node_api_versions_text(info.versions, ours)}"


@kafka_errors()
def broker_api_versions_command(
    ctx: typer.Context,
    bootstrap_server: Annotated[
        str | None,
        typer.Option(
            "--bootstrap-server",
            metavar="<String: server(s) to use for bootstrapping>",
            help="REQUIRED: The server to connect to.",
        ),
    ] = None,
    command_config: Annotated[
        str | None,
        typer.Option(
            "--command-config",
            metavar="<String: command config property file>",
            help="A property file containing configs to be passed to Admin Client.",
        ),
    ] = None,
    state: StateDirOption = None,
) -> None:
    """This tool helps to retrieve broker version information."""
    if all(ctx.get_parameter_source(name) in (ParameterSource.DEFAULT, None) for name in ctx.params):
        raise UsageError(DESCRIPTION)
    bootstrap_server = bootstrap_server or optional_bootstrap_server(state)
    if bootstrap_server is None:
        raise UsageError('Missing required argument "[bootstrap-server]"')
    found = command_config_for(bootstrap_server, command_config, state)
    with client_from_properties(bootstrap_server, load_command_config(found), CLIENT_ID) as client:
        brokers = list_all_broker_version_info(client, bootstrap_server)
    for info in brokers:
        sys.stdout.write(broker_line(info) + "\n")

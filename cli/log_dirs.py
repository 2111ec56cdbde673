"""`kafkaops log-dirs`: Kafka 2.8's kafka-log-dirs (`LogDirsCommand`): `--describe` asks each broker for its
log dirs (DescribeLogDirs) and prints Kafka's two lines and its JSON document.

Only `--bootstrap-server` mode, as Kafka: log dirs are known to the brokers alone. Left out, the running brokers
of the local cluster (`--state-dir`) are used, as by the other `--bootstrap-server` tools. `--command-config` is read
as Kafka's admin client properties: `client.id` and `request.timeout.ms` apply, the others are accepted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafkaops.admin import log_dirs
from kafkaops.admin.kafka_client import KafkaClient
from kafkaops.admin.kafka_client import log_dirs as calls
from kafkaops.admin.kafka_client.client_config import open_admin_client, read_command_config
from kafkaops.cli.common import StateDirOption, command_config_for, optional_bootstrap_server
from kafkaops.cli.output import kafka_errors, print_lines
from kafkaops.cluster.common.errors import UsageError
from kafkaops.cluster.common.jvm_text import java_parse_int

DESCRIPTION = "This tool helps to query log directory usage on the specified brokers."
MISSING = 'Missing required argument "[{}]"'
QUERYING = "Querying brokers for log directories information"
RECEIVED = "Received log directory information from brokers {}"
DEFAULT_CLIENT_ID = "log-dirs-tool"


def admin_client(
    bootstrap_server: str, command_config: Path | None, client_id: str, state: Path | None = None
) -> KafkaClient:
    """A client configured as Kafka's tools configure their admin client from `--command-config`."""
    found = command_config_for(bootstrap_server, command_config, state)
    return open_admin_client(bootstrap_server, read_command_config(found, client_id))


@kafka_errors()
def log_dirs_command(
    ctx: typer.Context,
    bootstrap_server: Annotated[
        str | None,
        typer.Option(
            "--bootstrap-server",
            metavar="<The server(s) to use for bootstrapping>",
            help="REQUIRED: the server(s) to use for bootstrapping",
        ),
    ] = None,
    command_config: Annotated[
        Path | None,
        typer.Option(
            "--command-config",
            metavar="<Admin client property file>",
            help="Property file containing configs to be passed to Admin Client.",
        ),
    ] = None,
    describe: Annotated[
        bool, typer.Option("--describe", help="Describe the specified log directories on the specified brokers.")
    ] = False,
    topic_list: Annotated[
        str,
        typer.Option(
            "--topic-list",
            metavar="<Topic list>",
            help='The list of topics to be queried in the form "topic1,topic2,topic3". All topics will be queried if no topic list is specified',
        ),
    ] = "",
    broker_list: Annotated[
        str | None,
        typer.Option(
            "--broker-list",
            metavar="<Broker list>",
            help='The list of brokers to be queried in the form "0,1,2". All brokers in the cluster will be queried if no broker list is specified',
        ),
    ] = None,
    state: StateDirOption = None,
) -> None:
    """Query the log dirs of brokers: sizes, offset lags, future logs (Kafka's kafka-log-dirs)."""
    if not any((bootstrap_server, command_config, describe, topic_list, broker_list)) and state is None:
        raise UsageError(DESCRIPTION)
    bootstrap_server = bootstrap_server or optional_bootstrap_server(state)
    if bootstrap_server is None:
        raise UsageError(MISSING.format("bootstrap-server"))
    if not describe:
        raise UsageError(MISSING.format("describe"))
    topics = log_dirs.parse_list_option(topic_list)
    brokers = [java_parse_int(b) for b in log_dirs.parse_list_option(broker_list)] if broker_list is not None else None
    with admin_client(bootstrap_server, command_config, DEFAULT_CLIENT_ID, state) as client:
        if brokers is None:
            brokers = sorted(client.metadata([]).brokers)
        print_lines([QUERYING])
        descriptions = calls.describe_log_dirs(client, brokers)
    print_lines(
        [
            RECEIVED.format(",".join(map(str, brokers))),
            log_dirs.encode_json(log_dirs.log_dirs_document(descriptions, set(topics))),
        ]
    )

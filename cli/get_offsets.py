"""`kafkaops get-offsets`: Kafka 3.0's kafka-get-offsets.sh (GetOffsetShell, KIP-635).

Kafka's options, texts and order; the filters and the requests live in `kafkaops.admin.get_offsets`.
Prints `topic:partition:offset` per selected partition, by topic then partition; a timestamp after a
partition's last record prints `topic:partition:` (Kafka's null offset). As in Kafka 3.0, failures print
`Error occurred: <message>` on stdout and exit 1; a partition without a leader is skipped with a line on
stderr.

Beyond Kafka 3.0 (as later Kafka): `--time` also takes `latest`, `earliest` and `max-timestamp`; -3 /
max-timestamp needs ListOffsets v7 (Kafka 3.0+ brokers) and is refused with a message where it is not
spoken; without --bootstrap-server / --broker-list, the running brokers of the local cluster (`--state-dir`).
Differences: no broker answering ends the command at once (Kafka's consumer waits 60 s), and
`--command-config` may ask for PLAINTEXT or SSL, not SASL yet (a secured local cluster's client.properties
is used for its brokers without one).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Annotated

import typer
from typer._click.core import ParameterSource  # Typer vendors click

from kafkaops.admin import get_offsets as go
from kafkaops.admin.kafka_client.client_config import client_from_properties, load_command_config
from kafkaops.cli.common import StateDirOption, command_config_for, optional_bootstrap_server
from kafkaops.cli.output import fail
from kafkaops.cluster.common.errors import BrokerError, KafkaOpsError, UsageError

DESCRIPTION = "An interactive shell for getting topic-partition offsets."
CLIENT_ID = "GetOffsetShell"
_HOST_PORT = re.compile(r".*?\[?([0-9a-zA-Z\-%._:]*)\]?:([0-9]+)")
"""Kafka's `Utils.HOST_PORT_PATTERN`, which `ToolsUtils.validatePortOrDie` checks every server against."""


def offset_line(result: go.PartitionOffset) -> str:
    return f"{result.topic}:{result.partition}:{'' if result.offset is None else result.offset}"


def leaderless_line(topic: str, partition: int) -> str:
    return f"Error: topic-partition {topic}:{partition} does not have a leader. Skip getting offsets"


def error_line(error: Exception) -> str:
    """Kafka's `Error occurred: ${e.getMessage}`: a broker's error prints its message, without its name."""
    message = error.message if isinstance(error, BrokerError) and error.message else str(error)
    return f"Error occurred: {message}"


def _valid_servers(servers: str) -> bool:
    return all(_HOST_PORT.fullmatch(server) for server in servers.split(","))


def get_offsets_command(
    ctx: typer.Context,
    bootstrap_server: Annotated[
        str | None,
        typer.Option(
            "--bootstrap-server",
            metavar="<String: HOST1:PORT1,...,HOST3:PORT3>",
            help="REQUIRED. The server(s) to connect to in the form HOST1:PORT1,HOST2:PORT2.",
        ),
    ] = None,
    broker_list: Annotated[
        str | None,
        typer.Option(
            "--broker-list",
            metavar="<String: HOST1:PORT1,...,HOST3:PORT3>",
            help="DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified. The "
            "server(s) to connect to in the form HOST1:PORT1,HOST2:PORT2.",
        ),
    ] = None,
    topic_partitions: Annotated[
        str | None,
        typer.Option(
            "--topic-partitions",
            metavar="<String: topic1:1,topic2:0-3,topic3,topic4:5-,topic5:-3>",
            help="Comma separated list of topic-partition patterns to get the offsets for, with the format of "
            f"'{go.TOPIC_PARTITION_PATTERN.pattern}'. The first group is an optional regex for the topic name, if "
            "omitted, it matches any topic name. The section after ':' describes a 'partition' pattern, which can "
            "be: a number, a range in the format of 'NUMBER-NUMBER' (lower inclusive, upper exclusive), an "
            "inclusive lower bound in the format of 'NUMBER-', an exclusive upper bound in the format of '-NUMBER' "
            "or may be omitted to accept all partitions.",
        ),
    ] = None,
    topic: Annotated[
        str | None,
        typer.Option(
            "--topic",
            metavar="<String: topic>",
            help="The topic to get the offsets for. It also accepts a regular expression. If not present, all "
            "authorized topics are queried. Cannot be used if --topic-partitions is present.",
        ),
    ] = None,
    partitions: Annotated[
        str | None,
        typer.Option(
            "--partitions",
            metavar="<String: partition ids>",
            help="Comma separated list of partition ids to get the offsets for. If not present, all partitions of "
            "the authorized topics are queried. Cannot be used if --topic-partitions is present.",
        ),
    ] = None,
    time_: Annotated[
        str,
        typer.Option(
            "--time",
            metavar="<String: <timestamp> / -1 or latest / -2 or earliest / -3 or max-timestamp>",
            help="timestamp of the offsets before that. [Note: No offset is returned, if the timestamp greater "
            "than recently committed record timestamp is given.]",
        ),
    ] = "-1",
    command_config: Annotated[
        str | None,
        typer.Option(
            "--command-config",
            metavar="<String: config file>",
            help="Property file containing configs to be passed to Consumer Client.",
        ),
    ] = None,
    exclude_internal_topics: Annotated[
        bool,
        typer.Option(
            "--exclude-internal-topics",
            help="By default, internal topics are included. If specified, internal topics are excluded.",
        ),
    ] = False,
    state: StateDirOption = None,
) -> None:
    """An interactive shell for getting topic-partition offsets."""
    try:
        if all(ctx.get_parameter_source(name) in (ParameterSource.DEFAULT, None) for name in ctx.params):
            raise UsageError(DESCRIPTION)
        servers = bootstrap_server if bootstrap_server is not None else broker_list
        servers = servers or optional_bootstrap_server(state)
        if servers is None:
            raise KafkaOpsError("Missing required option(s) [bootstrap-server]")
        if not _valid_servers(servers):
            raise UsageError("Please provide valid host:port like host1:9091,host2:9092\n ")
        found = command_config_for(servers, command_config, state)
        result = _run(servers, topic_partitions, topic, partitions, time_, found, exclude_internal_topics)
    except UsageError as error:
        raise fail(str(error), usage=ctx.get_help()) from None
    except KafkaOpsError as error:
        sys.stdout.write(error_line(error) + "\n")
        raise typer.Exit(code=1) from None
    for tp in result.leaderless:
        sys.stderr.write(leaderless_line(tp.topic, tp.partition) + "\n")
    for offset in result.offsets:
        sys.stdout.write(offset_line(offset) + "\n")


def _run(
    servers: str,
    topic_partitions: str | None,
    topic: str | None,
    partitions: str | None,
    time_: str,
    command_config: str | Path | None,
    exclude_internal_topics: bool,
) -> go.GetOffsetsResult:
    if topic_partitions is not None and (topic is not None or partitions is not None):
        raise KafkaOpsError("--topic-partitions cannot be used with --topic or --partitions")
    timestamp = go.parse_time(time_)
    if topic_partitions is not None:
        partition_filter = go.filter_from_patterns(topic_partitions, exclude_internal_topics)
    else:
        partition_filter = go.filter_from_topic_and_partitions(topic, partitions, exclude_internal_topics)
    with client_from_properties(servers, load_command_config(command_config), CLIENT_ID) as client:
        return go.get_offsets(client, partition_filter, timestamp)

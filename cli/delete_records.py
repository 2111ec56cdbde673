"""`kafkaops delete-records`: Kafka 2.8's kafka-delete-records (`DeleteRecordsCommand`): the partitions and
offsets of `--offset-json-file` go to their leaders as DeleteRecords; each partition's new low watermark or
error is printed as Kafka prints it.

Only `--bootstrap-server` mode, as Kafka (left out: the local cluster's running brokers, `--state-dir`). A partition that fails is printed and the command still exits 0,
as Kafka's does; a bad file exits 1 with Kafka's message (Kafka dies with a stack trace starting with it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafkaops.admin import log_dirs
from kafkaops.admin.kafka_client import log_dirs as calls
from kafkaops.cli.common import StateDirOption, optional_bootstrap_server
from kafkaops.cli.log_dirs import MISSING, admin_client
from kafkaops.cli.output import kafka_errors, print_lines
from kafkaops.cli.preferred_replica_election import read_file
from kafkaops.cluster.common.errors import UsageError
from kafkaops.cluster.common.java_errors import java_exception_text

DESCRIPTION = "This tool helps to delete records of the given partitions down to the specified offset."
EXECUTING = "Executing records delete operation"
COMPLETED = "Records delete operation completed:"
LOW_WATERMARK = "partition: {}\tlow_watermark: {}"
ERROR = "partition: {}\terror: {}"
DEFAULT_CLIENT_ID = "adminclient-1"


@kafka_errors()
def delete_records_command(
    ctx: typer.Context,
    bootstrap_server: Annotated[
        str | None,
        typer.Option(
            "--bootstrap-server",
            metavar="<server(s) to use for bootstrapping>",
            help="REQUIRED: The server to connect to.",
        ),
    ] = None,
    offset_json_file: Annotated[
        Path | None,
        typer.Option(
            "--offset-json-file",
            metavar="<Offset json file path>",
            help='REQUIRED: The JSON file with offset per partition. The format to use is: {"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], "version":1 }',
        ),
    ] = None,
    command_config: Annotated[
        Path | None,
        typer.Option(
            "--command-config",
            metavar="<command config property file path>",
            help="A property file containing configs to be passed to Admin Client.",
        ),
    ] = None,
    state: StateDirOption = None,
) -> None:
    """Delete records of partitions up to the given offsets (Kafka's kafka-delete-records)."""
    if not any((bootstrap_server, offset_json_file, command_config)) and state is None:
        raise UsageError(DESCRIPTION)
    bootstrap_server = bootstrap_server or optional_bootstrap_server(state)
    if bootstrap_server is None:
        raise UsageError(MISSING.format("bootstrap-server"))
    if offset_json_file is None:
        raise UsageError(MISSING.format("offset-json-file"))
    with admin_client(bootstrap_server, command_config, DEFAULT_CLIENT_ID, state) as client:
        offsets = log_dirs.records_to_delete(read_file(offset_json_file))
        print_lines([EXECUTING])
        results = calls.delete_records(client, offsets)
    lines = [COMPLETED]
    for tp in log_dirs.delete_records_order(results):
        result = results[tp]
        if isinstance(result, int):
            lines.append(LOW_WATERMARK.format(tp, result))
        else:
            lines.append(ERROR.format(tp, java_exception_text(result.code, result.message)))
    print_lines(lines)

"""`kafkaops preferred-replica-election`: Kafka 2.8's kafka-preferred-replica-election (reference §2.4).

ZooKeeper mode writes `/admin/preferred_replica_election` for the controller and returns, with Kafka's
texts (without its deprecation notices). `--bootstrap-server` goes through `admin.elections`' broker
path: an ElectLeaders request (preferred) to a broker, which forwards it to the controller.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafkaops.admin import elections
from kafkaops.cli.common import StateDirOption, ZookeeperOption, zookeeper
from kafkaops.cli.output import OutputFormat, fail, kafka_errors, print_json, print_lines
from kafkaops.cluster.common.errors import BrokerError, InvalidArgumentError, UsageError
from kafkaops.cluster.protocol.schemas import ElectionType
from kafkaops.cluster.zk.values import TopicPartition

DESCRIPTION = (
    "This tool helps to causes leadership for each partition to be transferred back to the 'preferred replica', "
    "it can be used to balance leadership among the servers."
)
EXACTLY_ONE_CONNECTION = "Exactly one of '[bootstrap-server]' or '[zookeeper]' must be provided"
# ZooKeeper mode
CREATED = "Created preferred replica election path with {}"
STARTED = "Successfully started preferred replica election for partitions {}"
SKIPPED = "Skipping preferred replica leader election for partition {} since it doesn't exist."
# --bootstrap-server mode
COMPLETED = "Successfully completed preferred leader election for partitions {}"
ALREADY_ELECTED = "Preferred replica already elected for partitions {}"
FAILED_PARTITION = "Error completing preferred leader election for partition: {}: {}"
FAILED = "{} preferred replica(s) could not be elected"


def read_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise InvalidArgumentError(f"Cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise InvalidArgumentError(f"Cannot read {path}: not UTF-8 text") from None


def started_lines(started: elections.PreferredElectionStarted) -> list[str]:
    return [
        CREATED.format(",".join(map(str, started.valid.items))),
        STARTED.format(started.valid),
        *(SKIPPED.format(tp) for tp in started.skipped.items),
    ]


def result_lines(result: elections.ElectionResult) -> list[str]:
    """Kafka's AdminClientCommand lines. Kafka prints the *elected* partitions after "already elected"
    (a bug); the partitions that needed no election are printed here."""
    lines = []
    if result.succeeded:
        lines.append(COMPLETED.format(", ".join(map(str, result.succeeded))))
    if result.not_needed:
        lines.append(ALREADY_ELECTED.format(", ".join(map(str, result.not_needed))))
    for tp, error in result.failed.items():
        lines.append(FAILED_PARTITION.format(tp, elections.java_exception_text(error)))
    return lines


def _partitions_document(partitions: elections.PartitionSet | tuple[TopicPartition, ...]) -> list[dict[str, object]]:
    items = partitions.items if isinstance(partitions, elections.PartitionSet) else partitions
    return [{"topic": tp.topic, "partition": tp.partition} for tp in items]


def _error_document(error: BrokerError | None) -> dict[str, object] | None:
    if error is None:
        return None
    return {"code": error.code, "name": error.name, "message": error.message or None}


def result_document(result: elections.ElectionResult) -> dict[str, object]:
    """An election's answer per partition, for scripts (`--output json`)."""
    return {
        "election_type": str(result.election_type),
        "partitions": [
            {"topic": tp.topic, "partition": tp.partition, "error": _error_document(error)}
            for tp, error in sorted(result.results.items())
        ],
    }


def print_result(result: elections.ElectionResult, output: OutputFormat, lines: list[str], failed: str) -> None:
    """Kafka's lines (or one JSON document); failed partitions make the command fail with `failed`."""
    if output is OutputFormat.json:
        print_json(result_document(result))
    else:
        print_lines(lines)
    if result.failed:
        raise fail(failed.format(len(result.failed)))


OutputOption = Annotated[OutputFormat, typer.Option("--output", help="text: Kafka's output; json: one JSON document.")]


@kafka_errors()
def preferred_replica_election_command(
    ctx: typer.Context,
    path_to_json_file: Annotated[
        Path | None,
        typer.Option(
            "--path-to-json-file",
            metavar="<list of partitions for which preferred replica leader election needs to be triggered>",
            help='The JSON file with the list of partitions for which preferred replica leader election should be done, in the following format - {"partitions": [{"topic": "foo", "partition": 1}, {"topic": "foobar", "partition": 2}]}. Defaults to all existing partitions',
        ),
    ] = None,
    zookeeper_connect: ZookeeperOption = None,
    state: StateDirOption = None,
    bootstrap_server: Annotated[
        str | None,
        typer.Option(
            "--bootstrap-server",
            metavar="<host:port>",
            help="A hostname and port for the broker to connect to, in the form host:port. Multiple comma-separated URLs can be given. REQUIRED unless --zookeeper is given.",
        ),
    ] = None,
    admin_config: Annotated[
        Path | None,
        typer.Option(
            "--admin.config",
            metavar="<config file>",
            help="Admin client config properties file to pass to the admin client when --bootstrap-server is given.",
        ),
    ] = None,
    output: OutputOption = OutputFormat.text,
) -> None:
    """Move leadership back to each partition's preferred replica (Kafka's kafka-preferred-replica-election)."""
    if not any((path_to_json_file, zookeeper_connect, state, bootstrap_server, admin_config)):
        raise UsageError(DESCRIPTION)
    if zookeeper_connect is not None and bootstrap_server is not None:
        raise UsageError(EXACTLY_ONE_CONNECTION)
    if admin_config is not None and bootstrap_server is None:
        raise UsageError("Option --admin.config is only available with --bootstrap-server")
    requested = None
    if path_to_json_file is not None:
        requested = elections.parse_election_json(read_file(path_to_json_file), elections.PREFERRED_REPLICA_FILE)
    if bootstrap_server is not None:
        result = elections.elect_leaders_via_broker(
            bootstrap_server,
            ElectionType.PREFERRED,
            requested,
            admin_config=None if admin_config is None else str(admin_config),
        )
        print_result(result, output, result_lines(result), FAILED)
        return
    with zookeeper(zookeeper_connect, state) as zk:
        started = elections.start_preferred_replica_election(zk, requested)
    if output is OutputFormat.json:
        print_json({"created": _partitions_document(started.valid), "skipped": _partitions_document(started.skipped)})
    else:
        print_lines(started_lines(started))

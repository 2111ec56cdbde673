"""`kafkaops leader-election`: Kafka 2.8's kafka-leader-election (reference §2.5).

Kafka's options, validations and result lines. Two paths to one `admin.elections.ElectionResult`:
`--bootstrap-server` (an ElectLeaders request to a broker, which forwards it to the controller) and, beyond Kafka,
`--zookeeper` for preferred elections: the preferred-replica intent znode, waited on until the leaders
moved (`--timeout`, default Kafka's 30 s).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafkaops.admin import elections
from kafkaops.cli.common import StateDirOption, ZookeeperOption, zookeeper
from kafkaops.cli.output import OutputFormat, kafka_errors
from kafkaops.cli.preferred_replica_election import EXACTLY_ONE_CONNECTION, OutputOption, print_result, read_file
from kafkaops.cluster.common.errors import InvalidArgumentError, UsageError
from kafkaops.cluster.protocol.schemas import ElectionType
from kafkaops.cluster.zk.values import TopicPartition

DESCRIPTION = (
    "This tool attempts to elect a new leader for a set of topic partitions. The type of elections supported are "
    "preferred replicas and unclean replicas."
)
MISSING_OPTIONS = "Missing required option(s): {}"
ONE_SELECTION = "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file"
PARTITION_WITHOUT_TOPIC = "Option partition is only allowed if topic is used"
COMPLETED = "Successfully completed leader election ({}) for partitions {}"
ALREADY_ELECTED = "Valid replica already elected for partitions {}"
FAILED_PARTITION = "Error completing leader election ({}) for partition: {}: {}"
FAILED = "{} replica(s) could not be elected"


def check_args(
    election_type: str | None, topic: str | None, partition: str | None, all_topic_partitions: bool, path: Path | None
) -> tuple[ElectionType, int | None]:
    """jopt-simple's conversions, then Kafka 2.8 `LeaderElectionCommand.validate`, in their order.

    --bootstrap-server is not required: --zookeeper (or its default) serves preferred elections.
    Raises InvalidArgumentError with Kafka's texts.
    """
    kind = None if election_type is None else elections.parse_election_type(election_type)
    number = None if partition is None else elections.parse_partition_option(partition)
    if kind is None:
        raise InvalidArgumentError(MISSING_OPTIONS.format("election-type"))
    if sum((topic is not None, all_topic_partitions, path is not None)) != 1:
        raise InvalidArgumentError(ONE_SELECTION)
    if topic is not None and number is None:
        raise InvalidArgumentError(MISSING_OPTIONS.format("partition"))
    if topic is None and number is not None:
        raise InvalidArgumentError(PARTITION_WITHOUT_TOPIC)
    return kind, number


def result_lines(result: elections.ElectionResult) -> list[str]:
    """Kafka's lines. Kafka prints the *elected* partitions after "Valid replica already elected" (a
    bug); the partitions that needed no election are printed here."""
    kind = result.election_type
    lines = []
    if result.succeeded:
        lines.append(COMPLETED.format(kind, ", ".join(map(str, result.succeeded))))
    if result.not_needed:
        lines.append(ALREADY_ELECTED.format(", ".join(map(str, result.not_needed))))
    for tp, error in result.failed.items():
        lines.append(FAILED_PARTITION.format(kind, tp, elections.java_exception_text(error)))
    return lines


@kafka_errors()
def leader_election_command(
    ctx: typer.Context,
    election_type: Annotated[
        str | None,
        typer.Option(
            "--election-type",
            metavar="<election type>",
            help='Type of election to attempt. Possible values are "preferred" for preferred leader election or "unclean" for unclean leader election. If preferred election is selection, the election is only performed if the current leader is not the preferred leader for the topic partition. If unclean election is selected, the election is only performed if there are no leader for the topic partition. REQUIRED.',
        ),
    ] = None,
    topic: Annotated[
        str | None,
        typer.Option(
            "--topic",
            metavar="<topic name>",
            help="Name of topic for which to perform an election. Not allowed if --path-to-json-file or --all-topic-partitions is specified.",
        ),
    ] = None,
    partition: Annotated[
        str | None,
        typer.Option(
            "--partition",
            metavar="<Integer: partition id>",
            help="Partition id for which to perform an election. REQUIRED if --topic is specified.",
        ),
    ] = None,
    all_topic_partitions: Annotated[
        bool,
        typer.Option(
            "--all-topic-partitions",
            help="Perform election on all of the eligible topic partitions based on the type of election (see the --election-type flag). Not allowed if --topic or --path-to-json-file is specified.",
        ),
    ] = False,
    path_to_json_file: Annotated[
        Path | None,
        typer.Option(
            "--path-to-json-file",
            metavar="<Path to JSON file>",
            help='The JSON file with the list of partition for which leader elections should be performed. This is an example format. {"partitions": [{"topic": "foo", "partition": 1}, {"topic": "foobar", "partition": 2}]} Not allowed if --all-topic-partitions or --topic flags are specified.',
        ),
    ] = None,
    bootstrap_server: Annotated[
        str | None,
        typer.Option(
            "--bootstrap-server",
            metavar="<host:port>",
            help="A hostname and port for the broker to connect to, in the form host:port. Multiple comma separated URLs can be given. REQUIRED unless --zookeeper is given (preferred elections only).",
        ),
    ] = None,
    admin_config: Annotated[
        Path | None,
        typer.Option(
            "--admin.config", metavar="<config file>", help="Configuration properties files to pass to the admin client"
        ),
    ] = None,
    zookeeper_connect: ZookeeperOption = None,
    state: StateDirOption = None,
    timeout: Annotated[
        int,
        typer.Option(
            "--timeout",
            metavar="<Long: timeout>",
            help="How long in ms to wait for the election results (beyond Kafka, which always waits 30 s).",
        ),
    ] = int(elections.DEFAULT_TIMEOUT_S * 1000),
    output: OutputOption = OutputFormat.text,
) -> None:
    """Elect new leaders: the preferred replicas, or unclean replicas (Kafka's kafka-leader-election)."""
    if not any(
        (election_type, topic, partition, all_topic_partitions, path_to_json_file, bootstrap_server)
    ) and not any((admin_config, zookeeper_connect, state)):
        raise UsageError(DESCRIPTION)
    kind, number = check_args(election_type, topic, partition, all_topic_partitions, path_to_json_file)
    if zookeeper_connect is not None and bootstrap_server is not None:
        raise UsageError(EXACTLY_ONE_CONNECTION)
    requested = None
    if path_to_json_file is not None:
        requested = elections.parse_election_json(read_file(path_to_json_file), elections.LEADER_ELECTION_FILE)
    elif topic is not None and number is not None:
        requested = elections.PartitionSet.of([TopicPartition(topic, number)])
    if bootstrap_server is not None:
        result = elections.elect_leaders_via_broker(
            bootstrap_server,
            kind,
            requested,
            timeout_s=timeout / 1000,
            admin_config=None if admin_config is None else str(admin_config),
        )
    else:
        if admin_config is not None:
            raise InvalidArgumentError("--admin.config configures the admin client of --bootstrap-server")
        if kind is ElectionType.UNCLEAN:
            raise InvalidArgumentError(elections.UNCLEAN_NEEDS_BOOTSTRAP)
        with zookeeper(zookeeper_connect, state) as zk:
            result = elections.elect_preferred_via_zookeeper(zk, requested, timeout_s=timeout / 1000)
    print_result(result, output, result_lines(result), FAILED)

"""The `kafkaops` Typer application: every command is registered here, in one place."""

from __future__ import annotations

from typing import Annotated

import typer

from kafkaops.cli.launcher import version_text
from kafkaops.cli.lazy_group import LazyCommand, LazyTyperGroup
from kafkaops.cluster.local.signals import EXIT_SIGINT, install_signal_handlers


def _command(module: str, attribute: str, summary: str, **settings: object) -> LazyCommand:
    return LazyCommand(f"kafkaops.cli.{module}", attribute, summary, dict(settings))


_EXTRA_ARGS = {"allow_extra_args": True}

LazyTyperGroup.lazy_commands = {
    "topics": _command(
        "topics",
        "topics_command",
        "Create, delete, describe, or change a topic (Kafka's kafka-topics, ZooKeeper mode).",
        context_settings={"allow_interspersed_args": True},
    ),
    "configs": _command(
        "configs",
        "configs_command",
        "Add/remove or list entity configs for topics, brokers, users and clients (Kafka's kafka-configs, "
        "ZooKeeper mode).",
        cls="kafkaops.cli.configs:ConfigsCommand",
    ),
    "state-change-log-merger": _command(
        "state_change_log_merger",
        "state_change_log_merger_command",
        "Merge the state-change logs of several brokers into one timeline (Kafka's StateChangeLogMerger).",
    ),
    "reassign-partitions": _command(
        "reassign_partitions",
        "reassign_partitions_command",
        "Move topic partitions between brokers (Kafka's kafka-reassign-partitions).",
    ),
    "preferred-replica-election": _command(
        "preferred_replica_election",
        "preferred_replica_election_command",
        "Move leadership back to each partition's preferred replica (Kafka's kafka-preferred-replica-election).",
    ),
    "leader-election": _command(
        "leader_election",
        "leader_election_command",
        "Elect new leaders: the preferred replicas, or unclean replicas (Kafka's kafka-leader-election).",
    ),
    "console-producer": _command(
        "console",
        "console_producer_command",
        "Read data from standard input and publish it to Kafka, one record per line.",
        context_settings=_EXTRA_ARGS,
    ),
    "console-consumer": _command(
        "console",
        "console_consumer_command",
        "Read data from Kafka topics and write it to standard output.",
        context_settings=_EXTRA_ARGS,
    ),
    "producer-perf-test": _command(
        "console",
        "producer_perf_test_command",
        "This tool is used to verify the producer performance.",
        context_settings=_EXTRA_ARGS,
    ),
    "consumer-groups": _command(
        "consumer_groups",
        "consumer_groups_command",
        "This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, or\n"
        "reset consumer group offsets.",
        cls="kafkaops.cli.consumer_groups:ConsumerGroupsCommand",
    ),
    "consumer-perf-test": _command(
        "consumer_perf",
        "consumer_perf_test_command",
        "This tool helps in performance test for the full zookeeper consumer.",
    ),
    "replica-verification": _command(
        "replica_verification",
        "replica_verification_command",
        "Validate that all replicas for a set of topics have the same data.",
    ),
    "log-dirs": _command(
        "log_dirs",
        "log_dirs_command",
        "Query the log dirs of brokers: sizes, offset lags, future logs (Kafka's kafka-log-dirs).",
    ),
    "delete-records": _command(
        "delete_records",
        "delete_records_command",
        "Delete records of partitions up to the given offsets (Kafka's kafka-delete-records).",
    ),
    "zookeeper-security-migration": _command(
        "zookeeper_security_migration",
        "zookeeper_security_migration_command",
        "ZooKeeper Migration Tool Help. This tool updates the ACLs of znodes as part of the process of setting up\n"
        "ZooKeeper authentication.",
    ),
    "dump-log": _command(
        "dump_log",
        "dump_log_command",
        "This tool helps to parse a log file and dump its contents to the console, useful for debugging a "
        "seemingly\ncorrupt log segment.",
    ),
    "get-offsets": _command(
        "get_offsets", "get_offsets_command", "An interactive shell for getting topic-partition offsets."
    ),
    "broker-api-versions": _command(
        "broker_api_versions",
        "broker_api_versions_command",
        "This tool helps to retrieve broker version information.",
    ),
    "acls": _command("acls", "acls_command", "This tool helps to manage acls on kafka."),
    "cluster": LazyCommand("kafkaops.cli.cluster", "app", "Run a local cluster.", is_group=True),
}

app = typer.Typer(
    name="kafkaops",
    cls=LazyTyperGroup,
    help="Apache Kafka's ZooKeeper-era operations scripts, rebuilt in Python.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help text: it is also printed after usage errors, as Kafka does
    context_settings={"help_option_names": ["--help", "-h"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(version_text())
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Display kafkaops' version.")
    ] = False,
) -> None:
    """Apache Kafka's ZooKeeper-era operations scripts, rebuilt in Python."""


def main() -> None:
    """Console-script entry point, and the one top-level handler of the process's exits.

    Click reports its own usage errors (unknown option, bad integer) with exit code 2; Kafka's tools
    exit 1 for every bad invocation, and scripts written against them test for 1.

    The process owns its signals whatever it inherited (a background job of a non-interactive shell,
    `nohup` and some CI runners start it with SIGINT ignored): SIGINT raises KeyboardInterrupt and SIGTERM
    SystemExit(143), so a long-running command (`reassign-partitions --verify --wait`, the console tools,
    `replica-verification`, `cluster demo`) stops, and its `finally` blocks close what it opened. Ctrl-C
    exits 130 without a traceback, as Kafka's JVM does; typer maps a command's KeyboardInterrupt to 130
    itself, and one raised outside the command (a second Ctrl-C while it cleans up) ends here.
    """
    install_signal_handlers()
    try:
        app()
    except KeyboardInterrupt:
        raise SystemExit(EXIT_SIGINT) from None
    except SystemExit as exit_:
        if exit_.code == 2:
            raise SystemExit(1) from None
        raise

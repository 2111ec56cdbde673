"""The `kafkaops` Typer application: every command is registered here, in one place."""

from __future__ import annotations

from importlib import metadata
from typing import Annotated

import typer

from kafkaops.cli import (
    broker_api_versions,
    cluster,
    configs,
    console,
    consumer_groups,
    consumer_perf,
    delete_records,
    dump_log,
    get_offsets,
    leader_election,
    log_dirs,
    preferred_replica_election,
    reassign_partitions,
    replica_verification,
    state_change_log_merger,
    topics,
    zookeeper_security_migration,
)
from kafkaops.cluster.local.signals import EXIT_SIGINT, install_signal_handlers

app = typer.Typer(
    name="kafkaops",
    help="Apache Kafka's ZooKeeper-era operations scripts, rebuilt in Python.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help text: it is also printed after usage errors, as Kafka does
    context_settings={"help_option_names": ["--help", "-h"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kafkaops {metadata.version('kafkaops')} (Kafka 2.8 ZooKeeper-mode tools)")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Display kafkaops' version.")
    ] = False,
) -> None:
    """Apache Kafka's ZooKeeper-era operations scripts, rebuilt in Python."""


app.command("topics", context_settings={"allow_interspersed_args": True})(topics.topics_command)
app.command("configs", cls=configs.ConfigsCommand)(configs.configs_command)
app.command("state-change-log-merger")(state_change_log_merger.state_change_log_merger_command)
app.command("reassign-partitions")(reassign_partitions.reassign_partitions_command)
app.command("preferred-replica-election")(preferred_replica_election.preferred_replica_election_command)
app.command("leader-election")(leader_election.leader_election_command)
app.command("console-producer", context_settings={"allow_extra_args": True})(console.console_producer_command)
app.command("console-consumer", context_settings={"allow_extra_args": True})(console.console_consumer_command)
app.command("producer-perf-test", context_settings={"allow_extra_args": True})(console.producer_perf_test_command)
app.command("consumer-groups", cls=consumer_groups.ConsumerGroupsCommand)(consumer_groups.consumer_groups_command)
app.command("consumer-perf-test")(consumer_perf.consumer_perf_test_command)
app.command("replica-verification")(replica_verification.replica_verification_command)
app.command("log-dirs")(log_dirs.log_dirs_command)
app.command("delete-records")(delete_records.delete_records_command)
app.command("zookeeper-security-migration")(zookeeper_security_migration.zookeeper_security_migration_command)
app.command("dump-log")(dump_log.dump_log_command)
app.command("get-offsets")(get_offsets.get_offsets_command)
app.command("broker-api-versions")(broker_api_versions.broker_api_versions_command)
app.add_typer(cluster.app, name="cluster")


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

"""`kafkaops consumer-perf-test`: Kafka 2.8's kafka-consumer-perf-test.sh (`ConsumerPerformance`).

Kafka's options, header, columns and warnings; the loop is `kafkaops.admin.consumer_perf`, the group
member `kafka_client.group_consumer` (auto.offset.reset earliest unless --from-latest, a random
`perf-consumer-N` group unless --group). Differences: --print-metrics prints no metrics (our client keeps
none); --socket-buffer-size, --threads and --num-fetch-threads are accepted and ignored (Kafka ignores the
last two too); without --bootstrap-server, the running brokers of the local cluster.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Annotated

import typer
from typer._click.core import ParameterSource  # Typer vendors click

from kafkaops.admin import consumer_perf as perf
from kafkaops.admin.configs import load_properties
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.kafka_client.client_config import channel_from_properties
from kafkaops.admin.kafka_client.consumer import OffsetResetPolicy
from kafkaops.admin.kafka_client.group_consumer import GroupConsumer, GroupConsumerConfig
from kafkaops.cli.common import StateDirOption, optional_bootstrap_server
from kafkaops.cli.output import fail, usage_text
from kafkaops.cluster.common.errors import KafkaOpsError, UsageError
from kafkaops.cluster.common.jvm_text import java_parse_int, java_parse_long

DESCRIPTION = "This tool helps in performance test for the full zookeeper consumer"


def _number(value: str | None, name: str, default: int, long: bool = False) -> int:
    if value is None:
        return default
    try:
        return java_parse_long(value) if long else java_parse_int(value)
    except ValueError:
        raise UsageError(f"Cannot parse argument '{value}' of option {name}") from None


def _emit(line: str) -> None:
    sys.stdout.write(line + "\n")


def consumer_perf_test_command(
    ctx: typer.Context,
    bootstrap_server: Annotated[
        str | None,
        typer.Option(
            "--bootstrap-server",
            metavar="<String: server to connect to>",
            help="REQUIRED unless --broker-list(deprecated) is specified. The server(s) to connect to.",
        ),
    ] = None,
    broker_list: Annotated[
        str | None,
        typer.Option(
            "--broker-list",
            metavar="<String: broker-list>",
            help="DEPRECATED, use --bootstrap-server "
            "instead; ignored if --bootstrap-server is specified.  The broker list string in the form "
            "HOST1:PORT1,HOST2:PORT2.",
        ),
    ] = None,
    topic: Annotated[
        str | None, typer.Option("--topic", metavar="<String: topic>", help="REQUIRED: The topic to consume from.")
    ] = None,
    messages: Annotated[
        str | None,
        typer.Option("--messages", metavar="<Long: count>", help="REQUIRED: The number of messages to send or consume"),
    ] = None,
    group: Annotated[
        str | None,
        typer.Option(
            "--group", metavar="<String: gid>", help="The group id to consume on. (default: perf-consumer-<random>)"
        ),
    ] = None,
    fetch_size: Annotated[
        str | None,
        typer.Option(
            "--fetch-size",
            metavar="<Integer: size>",
            help="The amount of data to fetch in a single request. (default: 1048576)",
        ),
    ] = None,
    from_latest: Annotated[
        bool,
        typer.Option(
            "--from-latest",
            help="If the consumer does not already have an established offset to consume "
            "from, start with the latest message present in the log rather than the earliest message.",
        ),
    ] = False,
    socket_buffer_size: Annotated[
        str | None,
        typer.Option(
            "--socket-buffer-size", metavar="<Integer: size>", help="The size of the tcp RECV size. (default: 2097152)"
        ),
    ] = None,
    threads: Annotated[
        str | None,
        typer.Option(
            "--threads",
            metavar="<Integer: count>",
            help="DEPRECATED AND IGNORED: Number of processing threads. (default: 10)",
        ),
    ] = None,
    num_fetch_threads: Annotated[
        str | None,
        typer.Option(
            "--num-fetch-threads",
            metavar="<Integer: count>",
            help="DEPRECATED AND IGNORED: Number of fetcher threads. (default: 1)",
        ),
    ] = None,
    consumer_config: Annotated[
        str | None,
        typer.Option("--consumer.config", metavar="<String: config file>", help="Consumer config properties file."),
    ] = None,
    print_metrics: Annotated[bool, typer.Option("--print-metrics", help="Print out the metrics.")] = False,
    show_detailed_stats: Annotated[
        bool,
        typer.Option(
            "--show-detailed-stats",
            help="If set, stats are reported for each reporting interval as configured by reporting-interval",
        ),
    ] = False,
    timeout: Annotated[
        str | None,
        typer.Option(
            "--timeout",
            metavar="<Long: milliseconds>",
            help="The maximum allowed time in milliseconds between returned records. (default: 10000)",
        ),
    ] = None,
    reporting_interval: Annotated[
        str | None,
        typer.Option(
            "--reporting-interval",
            metavar="<Integer: interval_ms>",
            help="Interval in milliseconds at which to print progress info. (default: 5000)",
        ),
    ] = None,
    date_format: Annotated[
        str,
        typer.Option(
            "--date-format",
            metavar="<String: date format>",
            help="The date format to use for formatting the time field. See java.text.SimpleDateFormat for options.",
        ),
    ] = perf.DEFAULT_DATE_FORMAT,
    hide_header: Annotated[
        bool, typer.Option("--hide-header", help="If set, skips printing the header for the stats ")
    ] = False,
    state: StateDirOption = None,
) -> None:
    """This tool helps in performance test for the full zookeeper consumer."""
    try:
        if all(ctx.get_parameter_source(name) in (ParameterSource.DEFAULT, None) for name in ctx.params):
            raise UsageError(DESCRIPTION)
        servers = bootstrap_server or broker_list or optional_bootstrap_server(state)
        if servers is None:
            raise UsageError("Missing required option(s) [bootstrap-server]")
        if threads is not None or num_fetch_threads is not None:
            sys.stdout.write(
                "WARNING: option [threads] and [num-fetch-threads] have been deprecated and will be "
                "ignored by the test\n"
            )
        if topic is None:
            raise UsageError('Missing required argument "[topic]"')
        if messages is None:
            raise UsageError('Missing required argument "[messages]"')
        _number(socket_buffer_size, "socket-buffer-size", 0)
        props = load_properties(Path(consumer_config)) if consumer_config else {}
        settings = perf.PerfSettings(
            messages=_number(messages, "messages", 0, long=True),
            timeout_ms=_number(timeout, "timeout", 10000, long=True),
            reporting_interval_ms=_number(reporting_interval, "reporting-interval", 5000),
            detailed=show_detailed_stats,
            date_format=date_format,
        )
        if settings.reporting_interval_ms <= 0:
            raise KafkaOpsError("Reporting interval must be greater than 0.")
        config = GroupConsumerConfig(
            group or f"perf-consumer-{random.randrange(100000)}",
            auto_offset_reset=OffsetResetPolicy.LATEST if from_latest else OffsetResetPolicy.EARLIEST,
            partition_max_bytes=_number(fetch_size, "fetch-size", 1024 * 1024),
            session_timeout_ms=int(props.get("session.timeout.ms", 10000)),
            enable_auto_commit=props.get("enable.auto.commit", "true").strip().lower() == "true",
        )
    except UsageError as error:
        raise fail(str(error), usage=usage_text(ctx)) from None
    except (KafkaOpsError, ValueError) as error:
        raise fail(str(error)) from None
    if not hide_header:
        sys.stdout.write(perf.header(show_detailed_stats) + "\n")
    try:
        channel = channel_from_properties(props)
        with KafkaClient(servers, client_id=props.get("client.id", "consumer-perf-test"), channel=channel) as client:
            consumer = GroupConsumer(client, [topic], config)
            try:
                result = perf.consume(consumer, settings, _emit)
            finally:
                consumer.close()
    except KafkaOpsError as error:
        raise fail(f"Error: {error}") from None
    except KeyboardInterrupt:
        raise typer.Exit(code=130) from None
    if not show_detailed_stats:
        sys.stdout.write(result.summary(date_format) + "\n")
    if print_metrics:
        sys.stdout.write("(no client metrics: kafkaops' consumer keeps none)\n")

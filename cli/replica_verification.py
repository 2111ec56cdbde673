"""`kafkaops replica-verification`: Kafka 2.8's kafka-replica-verification (kafka-reference.md §2.6).

Kafka's options, defaults and printed lines; the algorithm lives in `kafkaops.admin.replica_verification`.
Every text this command prints is written by one function below.

Beyond Kafka:

* `--once`: one pass for CI scripts: every selected partition is verified up to the smallest high
  watermark its replicas had at the start, then the max-lag line is printed; exit 0 when every replica
  agrees, 1 with the mismatch lines otherwise. `--output json` (with `--once`) prints one summary
  document instead of the lines.
* Clear one-line errors (exit 1) instead of Kafka's stack traces: no broker of `--broker-list`
  answers, a replica's broker is down at the start, an invalid `--time`.
* A `--time` after a partition's last record starts that partition at its end (Kafka's consumer answers
  null there and the tool dies with a NullPointerException).
* While a broker does not answer, a note on stderr (once per outage, and when it answers again).
* Ctrl-C ends it with 130 and SIGTERM with 143, as they end Kafka's JVM, without a traceback.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator
from typing import Annotated, Any

import typer
from typer._click.core import ParameterSource  # Typer vendors click

from kafkaops.admin import replica_verification as rv
from kafkaops.admin.kafka_client.client_config import open_admin_client, read_command_config
from kafkaops.cli.common import CommandConfigOption, StateDirOption, optional_bootstrap_server
from kafkaops.cli.output import OutputFormat, kafka_errors, print_json
from kafkaops.cluster.common import log4j
from kafkaops.cluster.common.errors import InvalidArgumentError, UsageError

DESCRIPTION = "Validate that all replicas for a set of topics have the same data."


# --- Kafka's texts -----------------------------------------------------------------------------------------


def timestamp_text(time_ms: int) -> str:
    """`SimpleDateFormat("yyyy-MM-dd HH:mm:ss,SSS")` in the local time zone."""
    return log4j.timestamp_ms(time_ms)


def started_line(time_ms: int) -> str:
    return f"{timestamp_text(time_ms)}: verification process is started."


def offset_mismatch_line(time_ms: int, m: rv.OffsetMismatch) -> str:
    return (
        f"{timestamp_text(time_ms)}: partition {m.topic_partition}: replica {m.replica}'s offset {m.offset} "
        f"doesn't match replica {m.other_replica}'s offset {m.other_offset}"
    )


def checksum_mismatch_line(time_ms: int, m: rv.ChecksumMismatch) -> str:
    return (
        f"{timestamp_text(time_ms)}: partition {m.topic_partition} has unmatched checksum at offset {m.offset}; "
        f"replica {m.replica}'s checksum {m.checksum}; replica {m.other_replica}'s checksum {m.other_checksum}"
    )


def max_lag_line(time_ms: int, report: rv.MaxLagReport) -> str:
    lag = report.max_lag
    partition = "null" if lag.topic_partition is None else str(lag.topic_partition)  # Scala prints a null as null
    return (
        f"{timestamp_text(time_ms)}: max lag is {lag.lag} for partition {partition} at offset {lag.offset} "
        f"among {report.partitions} partitions"
    )


def fetch_note(time_ms: int, note: rv.FetchFailed | rv.FetchRecovered) -> str:
    """Ours (stderr): Kafka's fetchers fail silently. At most five partitions are named."""
    names = ", ".join(str(tp) for tp in note.partitions[:5])
    if len(note.partitions) > 5:
        names += f" and {len(note.partitions) - 5} more"
    what = f"{names} from broker {note.broker_id}" if names else f"from broker {note.broker_id}"
    if isinstance(note, rv.FetchRecovered):
        return f"{timestamp_text(time_ms)}: fetching {what} works again"
    return (
        f"{timestamp_text(time_ms)}: fetching {what} failed ({note.error}); these replicas are not verified until "
        "they answer"
    )


def summary_document(summary: rv.OnceSummary) -> dict[str, Any]:
    """`--once --output json`."""

    def checksum(m: rv.ChecksumMismatch) -> dict[str, Any]:
        return {
            "offset": m.offset,
            "replica": m.replica,
            "checksum": m.checksum,
            "other_replica": m.other_replica,
            "other_checksum": m.other_checksum,
        }

    offset = summary.offset_mismatch
    max_lag = summary.max_lag
    return {
        "in_sync": summary.in_sync,
        "rounds": summary.rounds,
        "max_lag": None
        if max_lag is None or max_lag.topic_partition is None
        else {
            "lag": max_lag.lag,
            "topic": max_lag.topic_partition.topic,
            "partition": max_lag.topic_partition.partition,
            "offset": max_lag.offset,
        },
        "offset_mismatch": None
        if offset is None
        else {
            "topic": offset.topic_partition.topic,
            "partition": offset.topic_partition.partition,
            "replica": offset.replica,
            "offset": offset.offset,
            "other_replica": offset.other_replica,
            "other_offset": offset.other_offset,
        },
        "partitions": [
            {
                "topic": p.topic_partition.topic,
                "partition": p.topic_partition.partition,
                "replicas": list(p.replicas),
                "start_offset": p.start_offset,
                "target_offset": p.target_offset,
                "verified_offset": p.verified_offset,
                "high_watermarks": {str(r): hw for r, hw in sorted(p.high_watermarks.items())},
                "lag": p.lag,
                "checksum_mismatches": [checksum(m) for m in p.checksum_mismatches],
            }
            for p in summary.partitions
        ],
    }


# --- the command -------------------------------------------------------------------------------------------


def _out(line: str) -> None:
    """Kafka's `println` on System.out reaches a pipe line by line; so must ours (a script may kill us)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _err(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _render(events: Iterator[rv.Event], output: OutputFormat) -> int:
    """Print the events; the exit code: 1 after any mismatch in a --once pass or an offset mismatch."""
    code = 0
    for event in events:
        body, at = event.body, event.time_ms
        if isinstance(body, rv.OnceSummary):
            if output is OutputFormat.json:
                print_json(summary_document(body))
            code = 0 if body.in_sync else 1
        elif isinstance(body, rv.FetchFailed | rv.FetchRecovered):
            _err(fetch_note(at, body))
        elif output is OutputFormat.json:
            continue
        elif isinstance(body, rv.Started):
            _out(started_line(at))
        elif isinstance(body, rv.ChecksumMismatch):
            _out(checksum_mismatch_line(at, body))
        elif isinstance(body, rv.OffsetMismatch):
            _out(offset_mismatch_line(at, body))
            code = 1
        elif isinstance(body, rv.MaxLagReport):
            _out(max_lag_line(at, body))
    return code


@kafka_errors()
def replica_verification_command(
    ctx: typer.Context,
    broker_list: Annotated[
        str | None,
        typer.Option(
            "--broker-list",
            metavar="<String: hostname:port,...,hostname:port>",
            help="REQUIRED: The list of hostname and port of the server to connect to.",
        ),
    ] = None,
    bootstrap_server: Annotated[
        str | None,
        typer.Option(
            "--bootstrap-server",
            metavar="<String: hostname:port,...,hostname:port>",
            help="The same as --broker-list (beyond Kafka 2.8, so that every tool takes --bootstrap-server).",
        ),
    ] = None,
    command_config: CommandConfigOption = None,
    fetch_size: Annotated[
        int,
        typer.Option("--fetch-size", metavar="<Integer: bytes>", help="The fetch size of each request."),
    ] = rv.DEFAULT_FETCH_SIZE,
    max_wait_ms: Annotated[
        int,
        typer.Option("--max-wait-ms", metavar="<Integer: ms>", help="The max amount of time each fetch request waits."),
    ] = rv.DEFAULT_MAX_WAIT_MS,
    topic_white_list: Annotated[
        str,
        typer.Option(
            "--topic-white-list",
            metavar="<String: Java regex (String)>",
            help="White list of topics to verify replica consistency. Defaults to all topics.",
        ),
    ] = rv.DEFAULT_TOPIC_WHITE_LIST,
    time_: Annotated[
        int,
        typer.Option(
            "--time",
            metavar="<Long: timestamp/-1(latest)/-2(earliest)>",
            help="Timestamp for getting the initial offsets.",
        ),
    ] = rv.DEFAULT_TIME,
    report_interval_ms: Annotated[
        int, typer.Option("--report-interval-ms", metavar="<Long: ms>", help="The reporting interval.")
    ] = rv.DEFAULT_REPORT_INTERVAL_MS,
    once: Annotated[
        bool,
        typer.Option(
            "--once",
            help="One pass, for scripts (beyond Kafka): verify every partition up to the smallest high watermark "
            "its replicas have at the start, print the max lag, exit 0 when all replicas agree and 1 otherwise. "
            "Use --time -2 to verify the whole logs.",
        ),
    ] = False,
    output: Annotated[
        OutputFormat,
        typer.Option("--output", help="text: Kafka's lines; json: one summary document (with --once)."),
    ] = OutputFormat.text,
    state: StateDirOption = None,
) -> None:
    """Validate that all replicas for a set of topics have the same data."""
    if all(ctx.get_parameter_source(name) in (ParameterSource.DEFAULT, None) for name in ctx.params):
        raise UsageError(DESCRIPTION)
    if broker_list is not None and bootstrap_server is not None:
        raise UsageError("Only one of --broker-list or --bootstrap-server must be specified")
    broker_list = broker_list or bootstrap_server or optional_bootstrap_server(state, "--broker-list")
    if broker_list is None:
        raise UsageError('Missing required argument "[broker-list]"')
    client_factory = None
    if command_config is not None:
        config = read_command_config(command_config, rv.CLIENT_ID)
        client_factory = functools.partial(open_admin_client, config=config)
    if output is OutputFormat.json and not once:
        raise InvalidArgumentError("--output json needs --once: the continuous verification prints Kafka's lines")
    verifier = rv.ReplicaVerifier(
        broker_list,
        topic_white_list=topic_white_list,
        fetch_size=fetch_size,
        max_wait_ms=max_wait_ms,
        initial_offset_time=time_,
        client_factory=client_factory,
    )
    # SIGTERM exits 143 through the handler cli/app.py's main() installs for every command
    try:
        with verifier:
            events = rv.run_once(verifier) if once else rv.run_periodic(verifier, report_interval_ms)
            code = _render(events, output)
    except KeyboardInterrupt:
        raise typer.Exit(code=130) from None  # what Kafka's JVM exits with on SIGINT
    if code:
        raise typer.Exit(code=code)

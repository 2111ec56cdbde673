"""`kafkaops consumer-groups`: Kafka 2.8's kafka-consumer-groups.sh (`ConsumerGroupCommand`).

Kafka's options, checks, texts and orders; the library is `kafkaops.admin.consumer_groups*` (options and
reset arithmetic, the service over the Admin API, the tables). Usage errors print Kafka's message and the
usage, exit 1. Where Kafka prints `Error: ...` (a group that does not exist, a refused reset, a failed
deletion, `Executing consumer group command failed due to ...`) the text is Kafka's and the exit code 1
(Kafka's tool exits 0 there; scripts need to see the failure). `--output json` prints one document instead
of the tables, for scripts. Without --bootstrap-server, the running brokers of the local cluster.
"""

from __future__ import annotations

import dataclasses
import sys
from datetime import datetime
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from kafkaops.admin import consumer_groups as cg
from kafkaops.admin import consumer_groups_service as service
from kafkaops.admin import consumer_groups_text as text
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cli.common import StateDirOption, admin_client, optional_bootstrap_server
from kafkaops.cli.output import OutputFormat, fail, print_json, usage_text
from kafkaops.cluster.common import log4j
from kafkaops.cluster.common.errors import BrokerError, KafkaOpsError, UsageError
from kafkaops.cluster.common.java_errors import java_exception_text
from kafkaops.cluster.common.jvm_text import java_parse_long
from kafkaops.cluster.zk.values import TopicPartition

DESCRIPTION = (
    "This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, "
    "or reset consumer group offsets."
)
CLIENT_ID = "kafkaops-consumer-groups"
_LOGGER = "kafka.admin.ConsumerGroupCommand$"


class ConsumerGroupsCommand(TyperCommand):
    """`--state` takes an optional value, as joptsimple's `withOptionalArg`: `--list --state` and
    `--list --state stable` both work. Click has no optional values, so a bare `--state` (at the end, or
    before another option) is read as `--state=`."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]  # typer.Context is click's, narrowed
        rewritten = [
            "--state=" if arg == "--state" and (i + 1 == len(args) or args[i + 1].startswith("-")) else arg
            for i, arg in enumerate(args)
        ]
        return super().parse_args(ctx, rewritten)


def _flag(name: str, help_: str) -> Any:
    return typer.Option(name, help=help_)


def consumer_groups_command(
    ctx: typer.Context,
    bootstrap_server: Annotated[
        str | None,
        typer.Option(
            "--bootstrap-server",
            metavar="<String: server to connect to>",
            help="REQUIRED: The server(s) to connect to.",
        ),
    ] = None,
    command_config: Annotated[
        str | None,
        typer.Option(
            "--command-config",
            metavar="<String: command config property file>",
            help="Property file containing configs to be passed to Admin Client and Consumer.",
        ),
    ] = None,
    group: Annotated[
        list[str] | None,
        typer.Option("--group", metavar="<String: consumer group>", help="The consumer group we wish to act on."),
    ] = None,
    topic: Annotated[
        list[str] | None,
        typer.Option(
            "--topic",
            metavar="<String: topic>",
            help="The topic whose consumer group information should "
            "be deleted or topic whose should be included in the reset offset process. In `reset-offsets` "
            "case, partitions can be specified using this format: `topic1:0,1,2`, where 0,1,2 are the "
            "partition to be included in the process. Reset-offsets also supports multiple topic inputs.",
        ),
    ] = None,
    all_topics: Annotated[
        bool, _flag("--all-topics", "Consider all topics assigned to a group in the `reset-offsets` process.")
    ] = False,
    list_: Annotated[bool, _flag("--list", "List all consumer groups.")] = False,
    describe: Annotated[
        bool,
        _flag(
            "--describe",
            "Describe consumer group and list offset lag (number of "
            "messages not yet processed) related to given group.",
        ),
    ] = False,
    all_groups: Annotated[bool, _flag("--all-groups", "Apply to all consumer groups.")] = False,
    delete: Annotated[
        bool,
        _flag(
            "--delete",
            "Pass in groups to delete topic partition offsets and ownership "
            "information over the entire consumer group. For instance --group g1 --group g2",
        ),
    ] = False,
    timeout: Annotated[
        str | None,
        typer.Option(
            "--timeout",
            metavar="<Long: timeout (ms)>",
            help="The timeout that can be set for some use "
            "cases. For example, it can be used when describing the group to specify the maximum amount of "
            "time in milliseconds to wait before the group stabilizes (when the group is just created, or is "
            "going through some changes). (default: 5000)",
        ),
    ] = None,
    reset_offsets: Annotated[
        bool,
        _flag(
            "--reset-offsets",
            "Reset offsets of consumer group. Supports one "
            "consumer group at the time, and instances should be inactive. Has 2 "
            "execution options: --dry-run (the default) to plan which offsets to "
            "reset, and --execute to update the offsets. Additionally, the --export "
            "option is used to export the results to a CSV format. You must choose one "
            "of the following reset specifications: --to-datetime, --by-period, "
            "--to-earliest, --to-latest, --shift-by, --from-file, --to-current. To "
            "define the scope use --all-topics or --topic. One scope must be specified "
            "unless you use '--from-file'.",
        ),
    ] = False,
    delete_offsets: Annotated[
        bool,
        _flag(
            "--delete-offsets",
            "Delete offsets of consumer group. Supports one consumer group at the time, and multiple topics.",
        ),
    ] = False,
    dry_run: Annotated[
        bool,
        _flag(
            "--dry-run",
            "Only show results without executing changes on Consumer Groups. Supported operations: reset-offsets.",
        ),
    ] = False,
    execute: Annotated[bool, _flag("--execute", "Execute operation. Supported operations: reset-offsets.")] = False,
    export: Annotated[
        bool, _flag("--export", "Export operation execution to a CSV file. Supported operations: reset-offsets.")
    ] = False,
    to_offset: Annotated[
        str | None, typer.Option("--to-offset", metavar="<Long: offset>", help="Reset offsets to a specific offset.")
    ] = None,
    from_file: Annotated[
        str | None,
        typer.Option(
            "--from-file", metavar="<String: path to CSV file>", help="Reset offsets to values defined in CSV file."
        ),
    ] = None,
    to_datetime: Annotated[
        str | None,
        typer.Option(
            "--to-datetime",
            metavar="<String: datetime>",
            help="Reset offsets to offset from datetime. Format: 'YYYY-MM-DDTHH:mm:SS.sss'",
        ),
    ] = None,
    by_duration: Annotated[
        str | None,
        typer.Option(
            "--by-duration",
            metavar="<String: duration>",
            help="Reset offsets to offset by duration from current timestamp. Format: 'PnDTnHnMnS'",
        ),
    ] = None,
    to_earliest: Annotated[bool, _flag("--to-earliest", "Reset offsets to earliest offset.")] = False,
    to_latest: Annotated[bool, _flag("--to-latest", "Reset offsets to latest offset.")] = False,
    to_current: Annotated[bool, _flag("--to-current", "Reset offsets to current offset.")] = False,
    shift_by: Annotated[
        str | None,
        typer.Option(
            "--shift-by",
            metavar="<Long: number-of-offsets>",
            help="Reset offsets shifting current offset by 'n', where 'n' can be positive or negative.",
        ),
    ] = None,
    members: Annotated[
        bool,
        _flag(
            "--members",
            "Describe members of the group. This option may be used with "
            "'--describe' and '--bootstrap-server' options only.",
        ),
    ] = False,
    verbose: Annotated[
        bool,
        _flag(
            "--verbose",
            "Provide additional information, if any, when describing the "
            "group. This option may be used with '--offsets'/'--members'/'--state' and "
            "'--bootstrap-server' options only.",
        ),
    ] = False,
    offsets: Annotated[
        bool,
        _flag(
            "--offsets",
            "Describe the group and list all topic partitions in the group "
            "along with their offset lag. This is the default sub-action of and may be used "
            "with '--describe' and '--bootstrap-server' options only.",
        ),
    ] = False,
    group_state: Annotated[
        str | None,
        typer.Option(
            "--state",
            metavar="[String]",
            help="When specified with '--describe', includes "
            "the state of the group. When specified with '--list', it displays the state of all groups. It "
            "can also be used to list groups with specific states (--list --state stable,empty). This "
            "option may be used with '--describe', '--list' and '--bootstrap-server' options only.",
        ),
    ] = None,
    output: Annotated[
        OutputFormat, typer.Option("--output", help="text (Kafka's tables) or json (one document, for scripts).")
    ] = OutputFormat.text,
    state: StateDirOption = None,
) -> None:
    """This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, or
    reset consumer group offsets."""
    try:
        options = cg.ConsumerGroupOptions(
            bootstrap_server=bootstrap_server or optional_bootstrap_server(state),
            command_config=command_config,
            groups=tuple(group or ()),
            topics=tuple(topic or ()),
            all_topics=all_topics,
            all_groups=all_groups,
            list_=list_,
            describe=describe,
            delete=delete,
            reset_offsets=reset_offsets,
            delete_offsets=delete_offsets,
            dry_run=dry_run,
            execute=execute,
            export=export,
            timeout_ms=_long(timeout, "timeout") or cg.DEFAULT_TIMEOUT_MS,
            members=members,
            verbose=verbose,
            offsets=offsets,
            state=group_state,
            to_offset=_long(to_offset, "to-offset"),
            shift_by=_long(shift_by, "shift-by"),
            to_datetime=to_datetime,
            by_duration=by_duration,
            to_earliest=to_earliest,
            to_latest=to_latest,
            to_current=to_current,
            from_file=from_file,
        )
        for warning in cg.check_args(options):
            sys.stderr.write(warning + "\n")
        printed, document = _run(options)
    except UsageError as error:
        raise fail(str(error), usage=usage_text(ctx)) from None
    except KafkaOpsError as error:
        message = f"Executing consumer group command failed due to {_exception_text(error)}"
        if output == OutputFormat.json:
            print_json({"error": message})
        else:
            sys.stdout.write(f"\nError: {message}\n")
        raise typer.Exit(code=1) from None
    if output == OutputFormat.json:
        print_json(document)
    else:
        for err, line in printed.lines:
            (sys.stderr if err else sys.stdout).write(line + "\n")
    if printed.failed:
        raise typer.Exit(code=1)


def _long(value: str | None, name: str) -> int | None:
    """joptsimple's `ofType(Long)`: its text for a value that is not a Java long."""
    if value is None:
        return None
    try:
        return java_parse_long(value)
    except ValueError:
        raise UsageError(f"Cannot parse argument '{value}' of option {name}") from None


def _exception_text(error: KafkaOpsError) -> str:
    """What Kafka's `e.getMessage` prints for the error: the admin client's ExecutionException names the
    Java exception of a broker's error code."""
    if isinstance(error, BrokerError):
        return java_exception_text(error.code, error.message or None)
    return str(error)


def _run(options: cg.ConsumerGroupOptions) -> tuple[text.Printed, Any]:
    with admin_client(options.bootstrap_server or "", options.command_config, CLIENT_ID) as (client, _):
        if options.list_:
            return _list(client, options)
        if options.describe:
            return _describe(client, options)
        if options.delete:
            results = service.delete_groups(client, service.group_ids(client, options), options.timeout_ms)
            document = {
                "deleted": [g for g, e in results.items() if e is None],
                "failed": [{"group": g, "error": e} for g, e in results.items() if e is not None],
            }
            return text.delete_groups_report(results), document
        if options.reset_offsets:
            return _reset(client, options)
        outcome = service.delete_offsets(client, options.groups[0], options.topics, options.timeout_ms)
        printed = text.delete_offsets_report(options.groups[0], options.topics, outcome.top_level, outcome.partitions)
        return printed, {
            "group": options.groups[0],
            "error": outcome.top_level,
            "partitions": [
                {"topic": tp.topic, "partition": tp.partition, "error": e} for tp, e in outcome.partitions.items()
            ],
        }


def _list(client: KafkaClient, options: cg.ConsumerGroupOptions) -> tuple[text.Printed, Any]:
    if options.state is None:
        listings = service.list_groups(client, None)
        printed = text.Printed()
        for listing in listings:
            printed.out(listing.group_id)
        return printed, {"groups": [{"group": g.group_id} for g in listings]}
    states = cg.parse_states(options.state) if options.state else []
    listings = service.list_groups(client, states)
    pairs = [(g.group_id, g.state or "Unknown") for g in listings]
    return text.group_states_table(pairs), {"groups": [{"group": g, "state": s} for g, s in pairs]}


def _describe(client: KafkaClient, options: cg.ConsumerGroupOptions) -> tuple[text.Printed, Any]:
    groups = service.group_ids(client, options)
    timeout = options.timeout_ms
    if options.members:
        members = service.collect_groups_members(client, groups, timeout, options.verbose)
        return text.members_table(members, options.verbose), _groups_document(members, "members")
    if options.state is not None:
        states = service.collect_groups_state(client, groups, timeout)
        document = {"groups": [dataclasses.asdict(states[g]) for g in sorted(states)]}
        return text.states_table(states), document
    rows = service.collect_groups_offsets(client, groups, timeout)
    return text.offsets_table(rows), _groups_document(rows, "partitions")


def _groups_document(groups: dict[str, tuple[str | None, Any]], key: str) -> Any:
    return {
        "groups": [
            {
                "group": group,
                "state": groups[group][0],
                key: [_plain(dataclasses.asdict(row)) for row in groups[group][1] or ()],
            }
            for group in sorted(groups)
        ]
    }


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    if "assignment" in row:
        row["assignment"] = [{"topic": t, "partition": p} for t, p in row["assignment"]]
    return row


def _reset(client: KafkaClient, options: cg.ConsumerGroupOptions) -> tuple[text.Printed, Any]:
    result = service.reset_offsets(client, options)
    for warning in result.warnings:
        sys.stderr.write(f"[{log4j.timestamp(datetime.now())}] WARN {warning} ({_LOGGER})\n")
    printed = text.Printed()
    for error in result.errors:
        printed.error(error)
    plan = {group: result.plan[group] for group in text.reset_plan_order(result.plan)}
    if options.export:
        printed.out(cg.export_csv(plan, options.single_group))
    else:
        printed.extend(text.reset_table(plan))
    document = {
        "executed": result.executed,
        "groups": [{"group": g, "partitions": _offsets_document(offsets)} for g, offsets in plan.items()],
        "errors": result.errors,
    }
    return printed, document


def _offsets_document(offsets: dict[TopicPartition, int]) -> list[dict[str, Any]]:
    return [{"topic": tp.topic, "partition": tp.partition, "offset": offset} for tp, offset in offsets.items()]

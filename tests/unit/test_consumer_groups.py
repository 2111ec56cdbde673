"""kafka-consumer-groups.sh's pure part without a broker: Kafka's `checkArgs` texts, `--state` lists, the
`--topic` scopes, `--to-datetime` / `--by-duration`, the reset arithmetic, the reset plan CSV, the
tables as Kafka 2.8 prints them, and the ConsumerProtocol bytes."""

from __future__ import annotations

import dataclasses

import pytest

from kafkaops.admin import consumer_groups as cg
from kafkaops.admin import consumer_groups_text as text
from kafkaops.admin.kafka_client import consumer_protocol as cp
from kafkaops.cluster.common.errors import CorruptMessageError, UsageError
from kafkaops.cluster.zk.values import TopicPartition

T0, T1, T2 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 2)
BASE = cg.ConsumerGroupOptions(bootstrap_server="b:9092")


def opts(**kwargs: object) -> cg.ConsumerGroupOptions:
    return dataclasses.replace(BASE, **kwargs)  # type: ignore[arg-type]


# --- checkArgs ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (cg.ConsumerGroupOptions(list_=True), 'Missing required argument "[bootstrap-server]"'),
        (opts(describe=True), "Option [describe] takes one of these options: [group], [all-groups]"),
        (
            opts(describe=True, groups=("g",), members=True, offsets=True),
            "Option [describe] takes at most one of these options: [members], [offsets], [state]",
        ),
        (
            opts(describe=True, groups=("g",), members=True, state=""),
            "Option [describe] takes at most one of these options: [members], [offsets], [state]",
        ),
        (opts(describe=True, groups=("g",), state="x"), "Option [describe] does not take a value for [state]"),
        (opts(delete=True), "Option [delete] takes one of these options: [group], [all-groups]"),
        (
            opts(delete=True, groups=("g",), topics=("t",)),
            "The consumer does not support topic-specific offset deletion from a consumer group.",
        ),
        (
            opts(delete_offsets=True, groups=("g",)),
            "Option [delete-offsets] takes the following options: [group], [topic]",
        ),
        (
            opts(reset_offsets=True, groups=("g",), dry_run=True, execute=True, to_earliest=True),
            "Option [reset-offsets] only accepts one of [execute] and [dry-run]",
        ),
        (
            opts(reset_offsets=True, execute=True, to_earliest=True),
            "Option [reset-offsets] takes one of these options: [group], [all-groups]",
        ),
        (
            opts(reset_offsets=True, groups=("g",), execute=True, to_earliest=True, to_offset=3),
            'Option "[to-offset]" can\'t be used with option "[to-earliest]"',
        ),
        (
            opts(reset_offsets=True, groups=("g",), execute=True, to_latest=True, from_file="f"),
            'Option "[to-latest]" can\'t be used with option "[from-file]"',
        ),
        (
            opts(describe=True, groups=("g",), all_groups=True),
            'Option "[group]" can\'t be used with option "[all-groups]"',
        ),
        (opts(list_=True, groups=("g",)), 'Option "[group]" can\'t be used with option "[list]"'),
        (opts(list_=True, topics=("t",)), 'Option "[topic]" can\'t be used with option "[list]"'),
        (opts(describe=True, groups=("g",), topics=("t",)), 'Option "[topic]" can\'t be used with option "[describe]"'),
        (opts(), cg.ACTIONS_TEXT),
        (opts(describe=True, delete=True, groups=("g",)), cg.ACTIONS_TEXT),
        (opts(list_=True, members=True), "Option(s) [members] are unavailable given other options on the command line"),
        (
            opts(delete=True, groups=("g",), state=""),
            "Option(s) [state] are unavailable given other options on the command line",
        ),
    ],
)
def test_check_args_refuses_with_kafkas_text(options: cg.ConsumerGroupOptions, message: str) -> None:
    with pytest.raises(UsageError) as refused:
        cg.check_args(options)
    assert str(refused.value) == message


def test_check_args_accepts_actions_and_warns_on_the_dry_run_default() -> None:
    assert cg.check_args(opts(list_=True)) == []
    assert cg.check_args(opts(list_=True, state="stable")) == []
    assert cg.check_args(opts(describe=True, all_groups=True, members=True, verbose=True)) == []
    assert cg.check_args(opts(delete_offsets=True, groups=("g",), topics=("t",))) == []
    assert cg.check_args(opts(reset_offsets=True, groups=("g",), to_earliest=True)) == [cg.NO_EXECUTE_WARNING]
    assert cg.check_args(opts(reset_offsets=True, groups=("g",), to_earliest=True, dry_run=True)) == []


def test_dry_run_is_the_default_and_single_group() -> None:
    assert opts().dry_run_only and not opts(execute=True).dry_run_only
    assert opts(groups=("a",)).single_group and not opts(groups=("a", "b")).single_group


def test_no_scenario_text_lists_every_specification() -> None:
    assert cg.no_scenario_text() == (
        "Option [reset-offsets] requires one of the following scenarios: Set([to-offset], [shift-by], "
        "[to-datetime], [by-duration], [to-earliest], [to-latest], [to-current], [from-file])"
    )


# --- --state, --topic ----------------------------------------------------------------------------------------


def test_parse_states_any_case_in_order_without_duplicates() -> None:
    assert cg.parse_states("stable,Empty, STABLE") == ["Stable", "Empty"]
    with pytest.raises(UsageError, match=r"^Invalid state list 'stable,x'\. Valid states are: PreparingRebalance, "):
        cg.parse_states("stable,x")


def test_parse_topic_args() -> None:
    assert cg.parse_topic_args(["a", "b:0,2", "c:"]) == [
        cg.TopicScope("a"),
        cg.TopicScope("b", (0, 2)),
        cg.TopicScope("c", ()),
    ]
    with pytest.raises(cg.CommandFailedError, match='For input string: "x"'):
        cg.parse_topic_args(["b:0,x"])


# --- --to-datetime, --by-duration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "epoch_ms"),
    [
        ("2019-01-01T00:00:00.000", 1546300800000),
        ("2019-01-01T00:00:00.123Z", 1546300800123),
        ("2019-01-01T01:00:00.000+01:00", 1546300800000),
        ("2019-01-01T00:00:00.000-0130", 1546306200000),
        ("2019-01-01T01:00:00.000+01", 1546300800000),
    ],
)
def test_parse_datetime(value: str, epoch_ms: int) -> None:
    assert cg.parse_datetime(value) == epoch_ms


def test_parse_datetime_refusals() -> None:
    with pytest.raises(cg.CommandFailedError, match="does not contain a 'T'"):
        cg.parse_datetime("2019-01-01")
    with pytest.raises(cg.CommandFailedError, match='^Unparseable date: "2019-13-01T00:00:00.000"$'):
        cg.parse_datetime("2019-13-01T00:00:00.000")
    with pytest.raises(cg.CommandFailedError, match="Unparseable date"):
        cg.parse_datetime("2019-01-01T00:00:00")


@pytest.mark.parametrize(
    ("value", "ms"),
    [("PT1H", 3_600_000), ("P1DT2M", 86_520_000), ("pt0.5s", 500), ("-PT10S", -10_000), ("PT-1.5S", -1500)],
)
def test_parse_duration(value: str, ms: int) -> None:
    assert cg.parse_duration_ms(value) == ms


@pytest.mark.parametrize("value", ["P", "PT", "1H", "PT1X", ""])
def test_parse_duration_refusals(value: str) -> None:
    with pytest.raises(cg.CommandFailedError, match="^Text cannot be parsed to a Duration$"):
        cg.parse_duration_ms(value)


# --- the reset arithmetic -------------------------------------------------------------------------------------


def test_check_offsets_range_clamps_with_kafkas_warnings() -> None:
    result = cg.check_offsets_range({T0: 50, T1: 1, T2: 7}, {T0: 0, T1: 5, T2: None}, {T0: 10, T1: 10, T2: None})
    assert result[T0] == cg.ClampedOffset(
        10, "New offset (50) is higher than latest offset for topic partition t-0. Value will be set to 10"
    )
    assert result[T1] == cg.ClampedOffset(
        5, "New offset (1) is lower than earliest offset for topic partition t-1. Value will be set to 5"
    )
    assert result[T2] == cg.ClampedOffset(7)


def test_shifted_offsets_need_a_committed_offset() -> None:
    assert cg.shifted_offsets([T0, T1], {T0: 5, T1: 9}, -2) == {T0: 3, T1: 7}
    with pytest.raises(UsageError, match="^Cannot shift offset for partition t-1 since there is no current committed"):
        cg.shifted_offsets([T0, T1], {T0: 5}, 1)


def test_known_offsets_names_the_partition_without_one() -> None:
    assert cg.known_offsets([T0], {T0: 4}, "starting offset") == {T0: 4}
    with pytest.raises(UsageError, match="^Error getting ending offset of topic partition: t-1$"):
        cg.known_offsets([T0, T1], {T0: 4, T1: None}, "ending offset")


# --- the reset plan CSV --------------------------------------------------------------------------------------


def test_export_csv_single_group_and_many() -> None:
    plan = {"g1": {T0: 5, T1: 6}, "g,2": {T2: 7}}
    assert cg.export_csv({"g1": plan["g1"]}, single_group=True) == "t,0,5\nt,1,6\n"
    assert cg.export_csv(plan, single_group=False) == 'g1,t,0,5\ng1,t,1,6\n"g,2",t,2,7\n'


def test_parse_reset_plan_both_formats_round_trip() -> None:
    plan = {"g1": {T0: 5, T1: 6}, "g2": {T2: 7}}
    assert cg.parse_reset_plan(cg.export_csv(plan, single_group=False), ["g1", "g2"]) == plan
    assert cg.parse_reset_plan("t,0,5\nt,1,6\n", ["g1"]) == {"g1": {T0: 5, T1: 6}}
    # one --group but the file has the group column: the new format is read
    assert cg.parse_reset_plan("g2,t,2,7\n", ["g1"]) == {"g2": {T2: 7}}
    assert cg.parse_reset_plan("t,0,5\r\n", ["g1"]) == {"g1": {T0: 5}}


@pytest.mark.parametrize(
    ("csv_text", "message"),
    [
        ("g,t,x,5\n", 'Cannot deserialize value of type `int` from String "x": not a valid `int` value'),
        ("g,t,0,5,9\n", 'Too many entries: expected at most 4 (value #4 (1 chars) "9")'),
        ("g,t\n", "Not enough column values: expected 4, found 2"),
        ("g,t,0,five\n", 'Cannot deserialize value of type `long` from String "five": not a valid `long` value'),
    ],
)
def test_parse_reset_plan_refuses_malformed_lines(csv_text: str, message: str) -> None:
    with pytest.raises(cg.CommandFailedError) as refused:
        cg.parse_reset_plan(csv_text, ["g", "h"])
    assert str(refused.value) == message


# --- the tables ------------------------------------------------------------------------------------------------


def row(
    partition: int | None, offset: int | None, end: int | None, consumer: str | None = "c-1"
) -> text.PartitionAssignmentState:
    lag = None if offset is None or end is None else end - offset
    topic = None if partition is None else "orders"
    host = None if consumer is None else "/127.0.0.1"
    client = None if consumer is None else "cl"
    return text.PartitionAssignmentState("grp", topic, partition, offset, lag, consumer, host, client, end)


def test_offsets_table_as_kafka_prints_it() -> None:
    printed = text.offsets_table({"grp": ("Stable", [row(0, 3, 10), row(1, None, 4), row(None, None, None)])})
    assert printed.stdout == (
        "\n"
        "GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID\n"
        "grp             orders          0          3               10              7               c-1             /127.0.0.1      cl\n"
        "grp             orders          1          -               4               -               c-1             /127.0.0.1      cl\n"
        "grp             -               -          -               -               -               c-1             /127.0.0.1      cl\n"
    )
    assert printed.stderr == "" and not printed.failed


def test_offsets_table_notes_empty_rebalancing_and_dead_groups() -> None:
    printed = text.offsets_table(
        {
            "a": ("Empty", [row(0, 3, 10, consumer=None)]),
            "b": ("PreparingRebalance", []),
            "c": ("Dead", []),
            "d": (None, None),
        }
    )
    assert printed.stderr == (
        "\nConsumer group 'a' has no active members.\n\nWarning: Consumer group 'b' is rebalancing.\n"
    )
    assert "Error: Consumer group 'c' does not exist.\n" in printed.stdout
    assert "Error: The consumer group 'd' does not exist.\n" in printed.stdout
    assert printed.stdout.count("GROUP") == 1  # only a's table
    assert printed.failed


def test_members_table_with_group_instance_ids_and_verbose_assignment() -> None:
    members = [
        text.MemberAssignmentState("grp", "m-1", "/h1", "c1", "static-1", 2, (TopicPartition("b", 1), T0, T1)),
        text.MemberAssignmentState("grp", "m-2", "/h2", "c2", "", 0, ()),
    ]
    printed = text.members_table({"grp": ("Stable", members)}, verbose=True)
    assert printed.stdout.splitlines() == [
        "",
        "GROUP           CONSUMER-ID     GROUP-INSTANCE-ID HOST            CLIENT-ID       #PARTITIONS     ASSIGNMENT",
        "grp             m-1             static-1          /h1             c1              2               b(1), t(0,1)",
        "grp             m-2                               /h2             c2              0               -",
    ]


def test_members_table_without_instance_ids_nor_verbose() -> None:
    members = [text.MemberAssignmentState("grp", "m-1", "/h1", "c1", "", 1, ())]
    printed = text.members_table({"grp": ("Stable", members)}, verbose=False)
    assert printed.stdout.splitlines()[1:] == [
        "GROUP           CONSUMER-ID     HOST            CLIENT-ID       #PARTITIONS     ",
        "grp             m-1             /h1             c1              1               ",
    ]


def test_states_table_and_list_with_states() -> None:
    state = text.GroupState("grp", "localhost:9092 (1)", "range", "Stable", 2)
    assert text.states_table({"grp": state}).stdout.splitlines() == [
        "",
        "GROUP                     COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE           #MEMBERS",
        "grp                       localhost:9092 (1)        range                Stable          2",
    ]
    assert text.group_states_table([("a-much-longer-group", "Empty"), ("b", "Stable")]).stdout == (
        "GROUP               STATE\na-much-longer-group Empty\nb                   Stable\n"
    )


def test_reset_table() -> None:
    assert text.reset_table({"g": {T0: 4}}).stdout == (
        f"\n{'GROUP':<30} {'TOPIC':<30} {'PARTITION':<10} {'NEW-OFFSET':<15}\n{'g':<30} {'t':<30} {'0':<10} {'4':<15}\n"
    )
    assert text.reset_table({}).stdout == ""
    assert text.reset_table({"g": {}}).stdout.count("\n") == 2  # Kafka prints the header for a refused group


def test_delete_groups_report() -> None:
    assert (
        text.delete_groups_report({"a": None}).stdout == "Deletion of requested consumer groups ('a') was successful.\n"
    )
    refused = "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty."
    printed = text.delete_groups_report({"a": None, "b": refused})
    assert printed.failed
    assert printed.stdout == (
        "\nError: Deletion of some consumer groups failed:\n"
        f"* Group 'b' could not be deleted due to: {refused}\n"
        "\nThese consumer groups were deleted successfully: 'a'\n"
    )


def test_delete_offsets_report() -> None:
    ok = text.delete_offsets_report("g", ["t"], None, {T1: None, T0: None})
    assert ok.stdout.splitlines() == [
        "Request succeed for deleting offsets with topic t group g",
        "",
        f"{'TOPIC':<30} {'PARTITION':<15} {'STATUS':<15}",
        f"{'t':<30} {'0':<15} {'Successful':<15}",
        f"{'t':<30} {'1':<15} {'Successful':<15}",
    ]
    missing = text.delete_offsets_report("g", ["x"], "UNKNOWN_TOPIC_OR_PARTITION", {TopicPartition("x", -1): "boom"})
    assert missing.failed
    assert "Error: Encounter some partition level error, see the follow-up details:" in missing.stdout
    assert f"{'x':<30} {'Not Provided':<15} Error: boom" in missing.stdout
    refused = text.delete_offsets_report("g", ["t"], "NON_EMPTY_GROUP", {})
    assert "Error: Deleting offsets of a consumer group 'g' is forbidden if the group is not empty." in refused.stdout


def test_kafka_orders_small_maps_keep_insertion_order() -> None:
    assert text.kafka_partition_order([T2, T0, T1]) == [T2, T0, T1]
    many = [TopicPartition("t", p) for p in range(8)]
    assert sorted(text.kafka_partition_order(many)) == many


# --- ConsumerProtocol --------------------------------------------------------------------------------------------


def test_assignment_known_bytes_and_round_trip() -> None:
    data = cp.encode_assignment(cp.Assignment((T0, T1)))
    assert data.hex() == "000100000001000174000000020000000000000001ffffffff"
    assert cp.decode_assignment(data) == cp.Assignment((T0, T1))
    # v0 without user data at the end, as some clients write it
    assert cp.decode_assignment(bytes.fromhex("0000000000010001740000000100000002")).partitions == (T2,)


def test_subscription_round_trip_and_garbage() -> None:
    sub = cp.Subscription(("a", "b"), b"u", (T0,))
    assert cp.decode_subscription(cp.encode_subscription(sub)) == sub
    assert cp.decode_subscription(cp.encode_subscription(sub, version=0)) == cp.Subscription(("a", "b"), b"u")
    with pytest.raises(CorruptMessageError):
        cp.decode_assignment(b"\x00\x01\x00\x00\x00\x05")


def test_range_assign_as_kafkas_range_assignor() -> None:
    assignment = cp.range_assign({"t": 5, "u": 1}, {"m2": ["t"], "m1": ["t", "u"], "m3": ["t"]})
    assert assignment == {
        "m1": [TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)],
        "m2": [TopicPartition("t", 2), TopicPartition("t", 3)],
        "m3": [TopicPartition("t", 4)],
    }


# --- console-consumer's group settings -----------------------------------------------------------------------


def test_console_consumer_group_id_from_either_place_but_one_group() -> None:
    from kafkaops.admin.console import group_id_setting

    assert group_id_setting(None, {}) is None
    assert group_id_setting("g", {}) == "g"
    assert group_id_setting(None, {"group.id": "h"}) == "h"
    assert group_id_setting("g", {"group.id": "g"}) == "g"
    with pytest.raises(UsageError, match="do not match. Detected group ids: 'g', 'h'$"):
        group_id_setting("g", {"group.id": "h"})


def test_console_consumer_group_offset_reset() -> None:
    from kafkaops.admin.console import group_offset_reset
    from kafkaops.admin.kafka_client import OffsetResetPolicy

    assert group_offset_reset(False, {}) is OffsetResetPolicy.LATEST
    assert group_offset_reset(True, {}) is OffsetResetPolicy.EARLIEST
    assert group_offset_reset(False, {"auto.offset.reset": "none"}) is OffsetResetPolicy.NONE
    with pytest.raises(
        UsageError, match="^Can't simultaneously specify --from-beginning and 'auto.offset.reset=latest'"
    ):
        group_offset_reset(True, {"auto.offset.reset": "latest"})
    with pytest.raises(UsageError, match="^Invalid value x for configuration auto.offset.reset"):
        group_offset_reset(False, {"auto.offset.reset": "x"})

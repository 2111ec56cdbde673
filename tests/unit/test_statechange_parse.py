"""The state-change parser: every line shape of kafka-reference.md §4, ours, real logs, and bad input."""

from __future__ import annotations

import glob
import os
from datetime import datetime
from pathlib import Path

import pytest

from kafkaops.cluster.state_change_log import BrokerLog, ControllerLog, ErrorTrace, LeaderAndIsrPartitionState
from kafkaops.cluster.zk.values import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from kafkaops.statechange import patterns
from kafkaops.statechange.model import Entry, Partition, RawEntry
from kafkaops.statechange.parse import ORPHAN_KEY, parse_entry, split_entries
from kafkaops.statechange.sources import read_lines

KAFKA_LOGS = str(
    Path(__file__).resolve().parents[2].parent / "shared" / "kafka-logs"
)  # ../shared beside the repository


def parse_line(line: str) -> Entry:
    """The entry of one first line (as written by log4j, without its newline)."""
    keys, texts = split_entries([line.encode()], file_start=True)
    assert len(texts) == 1
    return parse_entry(RawEntry(keys[0], texts[0], "test.log", 1))


def file_entries(path: str) -> list[Entry]:
    entries = []
    line = 1
    for index, lines in enumerate(read_lines(path)):
        keys, texts = split_entries(lines, file_start=index == 0)
        for key, text in zip(keys, texts, strict=True):
            entries.append(parse_entry(RawEntry(key, text, path, line)))
            line += text.count(b"\n") + 1
    return entries


# --- golden lines: one per shape of §4.3 / §4.4, in each version's form -----------------------------

GOLDEN = [
    # (line, level, actor, actor id, controller epoch, partitions)
    # 0.8 - 0.11 controller (§4.3)
    (
        "[2015-03-01 10:00:00,123] TRACE Controller 0 epoch 1 changed partition [foo,0] from NewPartition to "
        "OnlinePartition with leader 0 (state.change.logger)",
        "TRACE",
        "controller",
        0,
        1,
        [("foo", 0)],
    ),
    (
        "[2015-03-01 10:00:00,124] TRACE Controller 0 epoch 1 changed partition [foo,0] state from NonExistentPartition "
        "to NewPartition with assigned replicas 1,2,3 (state.change.logger)",
        "TRACE",
        "controller",
        0,
        1,
        [("foo", 0)],
    ),
    (
        "[2015-03-01 10:00:00,125] ERROR Controller 2 epoch 9 initiated state change of replica 3 for partition "
        "[my.topic_x-y,12] from OnlineReplica to OfflineReplica failed (state.change.logger)",
        "ERROR",
        "controller",
        2,
        9,
        [("my.topic_x-y", 12)],
    ),
    (
        "[2015-03-01 10:00:00,126] TRACE Controller 0 epoch 1 sending become-leader LeaderAndIsr request "
        "(Leader:1,ISR:1,2,LeaderEpoch:3,ControllerEpoch:2) with correlationId 7 to broker 1 for partition [foo,0] "
        "(state.change.logger)",
        "TRACE",
        "controller",
        0,
        1,
        [("foo", 0)],
    ),
    (
        "[2015-03-01 10:00:00,127] TRACE Controller 0 epoch 1 received response UpdateMetadataResponse(1,0) for a "
        "request sent to broker id:1,host:kafka-1,port:9092 (state.change.logger)",
        "TRACE",
        "controller",
        0,
        1,
        [],
    ),
    # 0.8 - 0.11 broker (§4.4)
    (
        "[2015-03-01 10:00:00,130] TRACE Broker 1 received LeaderAndIsr request (LeaderAndIsrInfo:(Leader:0,ISR:0,1,"
        "LeaderEpoch:0,ControllerEpoch:1),ReplicationFactor:2),AllReplicas:0,1) correlation id 5 from controller 0 "
        "epoch 1 for partition [foo,0] (state.change.logger)",
        "TRACE",
        "broker",
        1,
        1,
        [("foo", 0)],
    ),
    (
        "[2015-03-01 10:00:00,131] WARN Broker 1 ignoring LeaderAndIsr request from controller 0 with correlation "
        "id 5 since its controller epoch 1 is old. Latest known controller epoch is 2 (state.change.logger)",
        "WARN",
        "broker",
        1,
        None,
        [],
    ),
    (
        "[2015-03-01 10:00:00,132] INFO Broker 1 skipped the become-follower state change after marking its "
        "partition as follower with correlation id 5 from controller 0 epoch 1 for partition [foo,0] since the new "
        "leader 0 is the same as the old leader (state.change.logger)",
        "INFO",
        "broker",
        1,
        1,
        [("foo", 0)],
    ),
    # 1.0+ controller (§4.3), with and without an epoch
    (
        "[2021-05-01 12:00:00,001] INFO [Controller id=0 epoch=1] Changed partition foo-0 state from "
        "NonExistentPartition to NewPartition with assigned replicas 0,1 (state.change.logger)",
        "INFO",
        "controller",
        0,
        1,
        [("foo", 0)],
    ),
    (
        "[2021-05-01 12:00:00,050] INFO [Controller id=0 epoch=1] Changed partition foo-0 from NewPartition to "
        "OnlinePartition with state LeaderAndIsr(leader=0, leaderEpoch=0, isr=List(0, 1), zkVersion=0) "
        "(state.change.logger)",
        "INFO",
        "controller",
        0,
        1,
        [("foo", 0)],
    ),
    (
        "[2021-05-01 12:00:00,060] DEBUG [Controller id=3] Received error in LeaderAndIsr response "
        "LeaderAndIsrResponseData(errorCode=0, partitionErrors=[]) from broker 1 (state.change.logger)",
        "DEBUG",
        "controller",
        3,
        None,
        [],
    ),
    (
        "[2021-05-01 12:00:00,070] TRACE [Controller id=0 epoch=1] Sending become-leader LeaderAndIsr request "
        "LeaderAndIsrPartitionState(topicName='foo', partitionIndex=0, controllerEpoch=1, leader=1, leaderEpoch=0, "
        "isr=[1, 2], zkVersion=0, replicas=[1, 2], addingReplicas=[], removingReplicas=[], isNew=true) to broker 1 "
        "for partition foo-0 (state.change.logger)",
        "TRACE",
        "controller",
        0,
        1,
        [("foo", 0)],
    ),
    (
        "[2021-05-01 12:00:00,080] INFO [Controller id=0 epoch=1] Mark replicas orders-3,payments-v2-11 on broker 2 "
        "as offline (state.change.logger)",
        "INFO",
        "controller",
        0,
        1,
        [("orders", 3), ("payments-v2", 11)],
    ),
    (
        "[2021-05-01 12:00:00,090] INFO [Controller id=0 epoch=1] Sending UpdateMetadata request to brokers "
        "HashSet(1, 2) for 4 partitions (state.change.logger)",
        "INFO",
        "controller",
        0,
        1,
        [],
    ),
    (
        "[2021-05-01 12:00:00,095] TRACE [Controller id=0 epoch=2] Received response {error_code=0,partitions=[{topic="
        "test-part-1-rep-5,partition=0,error_code=0}]} for request STOP_REPLICA with correlation id 10 sent to broker "
        "kafka-1:9092 (id: 1 rack: us-east-1) (state.change.logger)",
        "TRACE",
        "controller",
        0,
        2,
        [("test-part-1-rep-5", 0)],
    ),
    # 1.0+ broker (§4.4)
    (
        "[2019-12-01 10:00:00,130] TRACE [Broker id=1] Received LeaderAndIsr request LeaderAndIsrPartitionState("
        "topicName='foo', partitionIndex=0, controllerEpoch=1, leader=0, leaderEpoch=0, isr=[0, 1], zkVersion=0, "
        "replicas=[0, 1], addingReplicas=[], removingReplicas=[], isNew=true) correlation id 5 from controller 0 "
        "epoch 1 (state.change.logger)",
        "TRACE",
        "broker",
        1,
        1,
        [("foo", 0)],
    ),
    (
        "[2019-12-01 10:00:00,140] TRACE [Broker id=1] Handling LeaderAndIsr request correlationId 5 from controller 0 "
        "epoch 1 starting the become-follower transition for partition foo-0 with leader 0 (state.change.logger)",
        "TRACE",
        "broker",
        1,
        1,
        [("foo", 0)],
    ),
    (
        "[2021-05-01 12:00:01,000] INFO [Broker id=2] Leader user-events-eu-1-17 starts at leader epoch 4 from offset "
        "20 with high watermark 20 ISR [1,2] addingReplicas [] removingReplicas []. Previous leader epoch was 3. "
        "(state.change.logger)",
        "INFO",
        "broker",
        2,
        None,
        [("user-events-eu-1", 17)],
    ),
    (
        "[2021-05-01 12:00:01,001] INFO [Broker id=2] Follower foo-0 starts at leader epoch 4 from offset 0 with "
        "high watermark 0. Previous leader epoch was 3. (state.change.logger)",
        "INFO",
        "broker",
        2,
        None,
        [("foo", 0)],
    ),
    (
        "[2021-05-01 12:00:01,002] ERROR [Broker id=2] Truncated logs and checkpointed recovery boundaries for "
        "partition __consumer_offsets-49. (state.change.logger)",
        "ERROR",
        "broker",
        2,
        None,
        [("__consumer_offsets", 49)],
    ),
    # lines outside the layout, or from other loggers
    (
        "[2018-04-28 23:05:55,152] DEBUG preRegister called. Server=com.sun.jmx.mbeanserver.JmxMBeanServer@66d3c617, "
        "name=log4j:logger=state.change.logger (state.change.logger)",
        "DEBUG",
        None,
        None,
        None,
        [],
    ),
    ("[2018-04-28 23:05:55,152] FATAL something else", "FATAL", None, None, None, []),
    ("[2018-04-28 23:05:55,152]no level at all", None, None, None, None, []),
]


@pytest.mark.parametrize(("line", "level", "actor", "actor_id", "epoch", "partitions"), GOLDEN)
def test_golden_line(
    line: str, level: str | None, actor: str | None, actor_id: int | None, epoch: int | None, partitions: list
) -> None:
    entry = parse_line(line)
    assert entry.timestamp == line[1:24]
    assert (entry.level, entry.actor, entry.actor_id, entry.controller_epoch) == (level, actor, actor_id, epoch)
    assert entry.partitions == tuple(Partition(t, p) for t, p in partitions)
    assert not entry.message.endswith("(state.change.logger)")
    assert entry.continuation == ()


def test_message_keeps_prefix_and_drops_logger_suffix() -> None:
    entry = parse_line(GOLDEN[8][0])
    assert entry.message == (
        "[Controller id=0 epoch=1] Changed partition foo-0 state from NonExistentPartition to NewPartition "
        "with assigned replicas 0,1"
    )


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("for partition foo-0.", [("foo", 0)]),  # ends a sentence
        ("for partition foo-0.1 x", []),  # not a token of its own
        ("to broker kafka-1:9092 (id: 1 rack: null)", []),  # a host
        ("to broker kafka-1.example.com:9092", []),
        ("(id: 1 rack: us-east-1)", []),  # a rack
        ("isr=[0, 1], replicas=[0,1]", []),  # replica lists, not `[topic,partition]`
        ("Previous leader Some(-1) and leader=-2", []),
        ("topic id Some(ve_Bk47mTXuYymwGrh-pCQ)", []),
        ("partition a-b-c-10-3 and [x-1,2] and [y,3]", [("a-b-c-10", 3), ("x-1", 2), ("y", 3)]),
        ("partitions foo-0,foo-0 repeated", [("foo", 0)]),
        ("partition foo-12345678901234567890", []),  # beyond any partition number
        ("partition f\u00f6o-1", []),  # not a legal topic
    ],
)
def test_partition_forms(message: str, expected: list) -> None:
    entry = parse_line(f"[2021-05-01 12:00:00,000] INFO [Broker id=1] {message} (state.change.logger)")
    assert entry.partitions == tuple(Partition(t, p) for t, p in expected)


# --- ours: the lines kafkaops' own controller and brokers write (cluster/state_change_log.py) ---------


def test_lines_written_by_our_cluster() -> None:
    controller = ControllerLog(controller_id=2, epoch=5)
    broker = BrokerLog(broker_id=3)
    foo = TopicPartition("foo-bar", 7)
    when = datetime(2024, 5, 1, 13, 0, 0, 123000)
    state = LeaderAndIsrPartitionState.of(
        foo, LeaderIsrAndControllerEpoch(LeaderAndIsr(3, 1, (3, 2), 0), 5), ReplicaAssignment((3, 2)), is_new=False
    )
    written = [
        controller.partition_online(foo, "OfflinePartition", LeaderAndIsr(3, 1, (3, 2), 0)),
        controller.sending_leader_and_isr_partition(3, state),
        controller.mark_replicas_offline([foo, TopicPartition("bar", 0)], broker=1),
        broker.starting_become_leader(9, 2, 5, foo),
        controller.partition_state_change_failed(
            foo, "OfflinePartition", "OnlinePartition", ErrorTrace.state_change_failed("No replica for partition")
        ),
    ]
    text = "".join(entry.format(when) for entry in written).encode()
    keys, texts = split_entries(text.rstrip(b"\n").split(b"\n"), file_start=True)
    parsed = [parse_entry(RawEntry(k, t, "ours", 1)) for k, t in zip(keys, texts, strict=True)]
    assert [(e.actor, e.actor_id, e.controller_epoch) for e in parsed] == [
        ("controller", 2, 5),
        ("controller", 2, 5),
        ("controller", 2, None),  # Kafka logs this one as `[Controller id=2] `, without the epoch
        ("broker", 3, 5),
        ("controller", 2, 5),
    ]
    assert [e.partitions for e in parsed] == [
        (Partition("foo-bar", 7),),
        (Partition("foo-bar", 7),),
        (Partition("foo-bar", 7), Partition("bar", 0)),
        (Partition("foo-bar", 7),),
        (Partition("foo-bar", 7),),
    ]
    assert parsed[4].level == "ERROR"
    assert parsed[4].continuation == ("kafka.common.StateChangeFailedException: No replica for partition",)


# --- entries: continuation lines, orphans, line endings ----------------------------------------------


def test_continuation_lines_belong_to_the_entry_above() -> None:
    block = (
        b"leading garbage\n"
        b"\tat before.first(Entry.java:1)\n"
        b"[2024-05-01 13:00:00,000] ERROR [Controller id=1 epoch=2] failed (state.change.logger)\n"
        b"java.lang.IllegalStateException: boom\n"
        b"\tat a.b(C.scala:1)\n"
        b"[not a timestamp] line\n"
        b"[2024-05-01 13:00:00,001] INFO [Broker id=1] next (state.change.logger)"
    )
    keys, texts = split_entries(block.split(b"\n"), file_start=True)
    assert keys == [ORPHAN_KEY, b"[2024-05-01 13:00:00,000]", b"[2024-05-01 13:00:00,001]"]
    entries = [parse_entry(RawEntry(k, t, "f", 1)) for k, t in zip(keys, texts, strict=True)]
    assert entries[0].timestamp is None and entries[0].message == "leading garbage"
    assert entries[0].continuation == ("\tat before.first(Entry.java:1)",)
    assert entries[1].continuation == (
        "java.lang.IllegalStateException: boom",
        "\tat a.b(C.scala:1)",
        "[not a timestamp] line",
    )
    # short lines whose heads, run together, look like a run of entry starts are still continuations
    tricky = [b"[2024-05-01 13:00:00,000] a", b"[2024-05-01 1", b"3:00:00,000][2024-05-01 13:00:00,000] b"]
    assert split_entries(tricky, file_start=True) == ([b"[2024-05-01 13:00:00,000]"], [b"\n".join(tricky)])
    # a block that does not start a file starts with an entry by construction; no orphan there
    assert split_entries([b"[2024-05-01 13:00:00,000] x"], file_start=False)[0] == [b"[2024-05-01 13:00:00,000]"]


def test_the_layout_without_brackets_starts_entries_keyed_by_their_time() -> None:
    """Strimzi's images write `%d{ISO8601} %p %m (%c) [%t]%n`: its lines start entries, keyed as Kafka's
    layout is, so a merge orders both by time; the thread after the logger is not part of the message."""
    block = [
        b"2020-03-23 21:38:24,484 TRACE [Controller id=0 epoch=1] Changed state of replica 2 for partition "
        b"t-0 from NewReplica to OnlineReplica (state.change.logger) [controller-event-thread]",
        b"java.lang.IllegalStateException: boom",
        b"[2020-03-23 21:38:24,485] INFO [Broker id=1] bracketed (state.change.logger)",
        b"2020-03-23 21:38:24 no milliseconds: a continuation",
    ]
    keys, texts = split_entries(block, file_start=True)
    assert keys == [b"[2020-03-23 21:38:24,484]", b"[2020-03-23 21:38:24,485]"]
    assert texts == [b"\n".join(block[:2]), b"\n".join(block[2:])]
    entry = parse_entry(RawEntry(keys[0], texts[0], "f", 1))
    assert (entry.timestamp, entry.level, entry.actor_id, entry.controller_epoch) == (
        "2020-03-23 21:38:24,484",
        "TRACE",
        0,
        1,
    )
    assert entry.message == (
        "[Controller id=0 epoch=1] Changed state of replica 2 for partition t-0 from NewReplica to OnlineReplica"
    )
    assert entry.partitions == (Partition("t", 0),)


def test_crlf_lines_keep_their_bytes_and_parse_without_cr() -> None:
    block = b"[2024-05-01 13:00:00,000] INFO [Broker id=1] Follower foo-0 starts (state.change.logger)\r\n\tat x\r"
    keys, texts = split_entries(block.split(b"\n"), file_start=True)
    assert texts == [block]
    entry = parse_entry(RawEntry(keys[0], texts[0], "f", 1))
    assert entry.message == "[Broker id=1] Follower foo-0 starts"
    assert entry.partitions == (Partition("foo", 0),)
    assert entry.continuation == ("\tat x",)


def test_garbage_is_an_entry_never_an_exception() -> None:
    garbage = bytes(range(256)) * 40
    keys, texts = split_entries(garbage.split(b"\n"), file_start=True)
    assert keys == [ORPHAN_KEY] and texts == [garbage]
    entry = parse_entry(RawEntry(keys[0], texts[0], "f", 1))
    assert entry.timestamp is None and entry.actor is None and len(entry.continuation) == 40
    long_line = "[2024-05-01 13:00:00,000] INFO [Broker id=1] " + "x-1 [y," * 300_000 + " (state.change.logger)"
    entry = parse_line(long_line)  # 2 MB, pathological for backtracking regexes: must stay linear
    assert entry.actor_id == 1 and len(entry.partitions) == 1


@pytest.mark.parametrize("block_size", [1, 5, 26, 27, 64, 1 << 16])
def test_read_lines_cuts_only_before_an_entry(tmp_path: Path, block_size: int) -> None:
    """Whatever the reads, the lists are the file's lines, and each list but the first starts an entry."""
    data = (
        b"orphan\n[2024-05-01 13:00:00,000] a\r\n[x] b\n[2024-05-01 13:00:00,001] c\n\tat d\n\n"
        b"[2024-05-01 13:00:00,002] e\n[2024-05-0"
    )
    path = tmp_path / "f.log"
    for content in (data, data + b"1 13:00:00,003] f\n", b"\n", b"x"):
        path.write_bytes(content)
        lists = list(read_lines(str(path), block_size))
        assert [line for lines in lists for line in lines] == content.removesuffix(b"\n").split(b"\n")
        assert all(patterns.ENTRY_START_RE.match(lines[0]) for lines in lists[1:])
    path.write_bytes(b"")
    assert list(read_lines(str(path), block_size)) == []


def test_patterns_use_the_common_subset_of_python_and_java() -> None:
    for name in ("TIMESTAMP", "ENTRY_START", "HEADER", "ACTOR", "REQUEST_EPOCH", "PARTITION", "LEGAL_TOPIC"):
        pattern = getattr(patterns, name)
        assert "(?P<" not in pattern and "\\d" not in pattern and "\\w" not in pattern, name
        assert not pattern.rstrip(")").endswith("$"), name


# --- the real logs in ../shared/kafka-logs --------------------------------------------------------

REAL_COUNTS = {
    "kafka-0.11.0.0_oridonner-3brokers-shared.state-change.excerpt.log": (123, 123),
    "kafka-0.8.2.1_jihochoi-bench_broker0.state-change.log.2016-09-14-12.log": (91, 91),
    "kafka-0.8.2.1_jihochoi-bench_broker0.state-change.log.2016-09-14-13.log": (141, 116),
    "kafka-0.8.2.1_jihochoi-bench_broker0.state-change.log.2016-09-14-14.log": (78, 78),
    "kafka-0.8.2.1_jihochoi-bench_broker0.state-change.log.2016-09-21-13.log": (152, 102),
    "kafka-1.1.x_wzhang512-openshift_broker0.state-change.log": (566, 566),
    "kafka-2.0.0_united10-matchmaking_broker0.state-change.log.2018-11-05-00.excerpt.log": (140, 140),
    "kafka-2.0.0_united10-matchmaking_broker0.state-change.log.2018-11-05-12.log": (26, 26),
    "kafka-2.3.0_gianniskalopisis-5brokers-shared.state-change.log": (252, 252),
    "kafka-2.6.0_zensonize-thairailway_broker0.state-change.log.2020-12-27-16.log": (31, 31),
    "kafka-3.3.1_cookjustin-quickstart-zk_broker0.state-change.log": (173, 173),
    "kafka-4.0.0-kraft_ammar_broker1.state-change.log": (22, 22),
}


def test_every_real_log_is_covered() -> None:
    assert sorted(os.path.basename(p) for p in glob.glob(f"{KAFKA_LOGS}/*.log")) == sorted(REAL_COUNTS)


@pytest.mark.parametrize("name", sorted(REAL_COUNTS))
def test_real_log_entry_counts(name: str) -> None:
    lines, entries = REAL_COUNTS[name]
    parsed = file_entries(f"{KAFKA_LOGS}/{name}")
    assert len(parsed) == entries
    assert sum(1 + len(e.continuation) for e in parsed) == lines
    assert all(e.timestamp is not None for e in parsed)  # none of them starts with an orphan line
    assert all(e.actor is not None for e in parsed if e.level != "DEBUG")  # every state-change line has an actor


@pytest.mark.parametrize(
    ("name", "line", "actor", "actor_id", "epoch", "partitions"),
    [
        (
            "kafka-0.8.2.1_jihochoi-bench_broker0.state-change.log.2016-09-14-12.log",
            1,
            "controller",
            0,
            1,
            [("ad-events", 0)],
        ),
        (
            "kafka-0.8.2.1_jihochoi-bench_broker0.state-change.log.2016-09-14-13.log",
            62,
            "broker",
            0,
            None,
            [("ad-events", 0)],
        ),
        ("kafka-0.11.0.0_oridonner-3brokers-shared.state-change.excerpt.log", 2, "controller", 1, 1, []),
        (
            "kafka-0.11.0.0_oridonner-3brokers-shared.state-change.excerpt.log",
            8,
            "controller",
            1,
            1,
            [("__CruiseControlMetrics", 0)],
        ),
        (
            "kafka-0.11.0.0_oridonner-3brokers-shared.state-change.excerpt.log",
            15,
            "broker",
            1,
            1,
            [("__CruiseControlMetrics", 0)],
        ),
        ("kafka-0.11.0.0_oridonner-3brokers-shared.state-change.excerpt.log", 49, "broker", 1, 1, [("test", 1)]),
        ("kafka-1.1.x_wzhang512-openshift_broker0.state-change.log", 2, "controller", 0, 1, [("test", 0)]),
        (
            "kafka-2.3.0_gianniskalopisis-5brokers-shared.state-change.log",
            17,
            "controller",
            0,
            1,
            [("test-part-1-rep-5", 0)],
        ),
        (
            "kafka-2.0.0_united10-matchmaking_broker0.state-change.log.2018-11-05-00.excerpt.log",
            2,
            "broker",
            0,
            2,
            [("Test1", 0)],
        ),
        ("kafka-3.3.1_cookjustin-quickstart-zk_broker0.state-change.log", 1, "controller", 0, 1, []),
        ("kafka-4.0.0-kraft_ammar_broker1.state-change.log", 2, "broker", 1, None, [("ssl-test-topic", 2)]),
    ],
)
def test_real_log_known_answers(
    name: str, line: int, actor: str, actor_id: int, epoch: int | None, partitions: list
) -> None:
    entry = next(e for e in file_entries(f"{KAFKA_LOGS}/{name}") if e.line == line)
    assert (entry.actor, entry.actor_id, entry.controller_epoch) == (actor, actor_id, epoch)
    assert entry.partitions == tuple(Partition(t, p) for t, p in partitions)


def test_real_stack_trace_is_one_entry() -> None:
    name = "kafka-0.8.2.1_jihochoi-bench_broker0.state-change.log.2016-09-14-13.log"
    entry = next(e for e in file_entries(f"{KAFKA_LOGS}/{name}") if e.level == "ERROR")
    assert entry.line == 28
    assert entry.continuation[0].startswith("kafka.common.NoReplicaOnlineException: No replica for partition")
    assert len(entry.continuation) == 25

"""Kafka's reassignment files (admin/reassignment.py): texts and key orders exactly as Kafka 2.8's."""

from __future__ import annotations

import json

import pytest

from kafkaops.admin import reassignment as files
from kafkaops.cluster.common.errors import AdminOperationError, InvalidArgumentError, UnknownTopicOrPartitionError
from kafkaops.cluster.zk.values import TopicPartition


def test_topics_to_move_parses_in_file_order_with_version_optional():
    assert files.parse_topics_to_move_json('{"topics":[{"topic":"foo"},{"topic":"foo1"}],"version":1}') == [
        "foo",
        "foo1",
    ]
    assert files.parse_topics_to_move_json('{"topics":[{"topic":"b"},{"topic":"a"}]}') == ["b", "a"]
    assert files.parse_topics_to_move_json('{"version":1}') == []


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("", AdminOperationError, "The input string is not a valid JSON"),
        ("{not json", AdminOperationError, "The input string is not a valid JSON"),
        ('{"topics":[],"version":2}', AdminOperationError, "Not supported version field value 2"),
        ('{"topics":[],"version":"1"}', InvalidArgumentError, 'Expected `Int` value, received "1"'),
        ("[1]", InvalidArgumentError, "Expected JSON object, received [1]"),
        ('{"topics":{}}', InvalidArgumentError, "Expected JSON array, received {}"),
        ('{"topics":[{"name":"foo"}]}', InvalidArgumentError, "No such field exists: `topic`"),
        ('{"topics":[{"topic":7}]}', InvalidArgumentError, "Expected `String` value, received 7"),
    ],
)
def test_topics_to_move_errors_are_kafkas(text, error, message):
    with pytest.raises(error) as caught:
        files.parse_topics_to_move_json(text)
    assert str(caught.value) == message


def test_duplicate_topics_text():
    files.check_topics_to_move(["a", "b"])
    with pytest.raises(InvalidArgumentError, match=r"^List of topics to reassign contains duplicate entries: a$"):
        files.check_topics_to_move(["a", "b", "a"])


def test_broker_list_is_scala_split_and_to_int():
    assert files.parse_broker_list("0,1,2") == [0, 1, 2]
    assert files.parse_broker_list("3,1,") == [3, 1]  # Java's split drops trailing empty strings
    assert files.parse_broker_list("+5") == [5]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1, 2", 'For input string: " 2"'),
        ("", 'For input string: ""'),
        ("a", 'For input string: "a"'),
        ("2147483648", 'For input string: "2147483648"'),
        ("1,2,1", "Broker list contains duplicate entries: 1"),
    ],
)
def test_broker_list_errors_are_kafkas(text, message):
    with pytest.raises(InvalidArgumentError) as caught:
        files.parse_broker_list(text)
    assert str(caught.value) == message


def test_duplicates_are_printed_in_scala_hash_order():
    # Scala 2.13 groupBy builds a HashMap: CHAMP order of the improved hash codes (reference §0.2)
    assert files.duplicates([5, 1, 5, 1, 0, 0, 2], lambda b: b) == [0, 5, 1]
    assert files.duplicates([3, 3], lambda b: b) == [3]


def test_reassignment_json_round_trip_with_kafkas_key_order_and_sort():
    text = files.format_reassignment_json(
        {("foo", 1): [1, 2], ("bar", 0): [7, 8], TopicPartition("foo", 0): [3]},
    )
    assert text == (
        '{"version":1,"partitions":['
        '{"topic":"bar","partition":0,"replicas":[7,8],"log_dirs":["any","any"]},'
        '{"topic":"foo","partition":0,"replicas":[3],"log_dirs":["any"]},'
        '{"topic":"foo","partition":1,"replicas":[1,2],"log_dirs":["any","any"]}]}'
    )
    entries = files.parse_reassignment_json(text)
    assert [(e.partition, e.replicas, e.log_dirs) for e in entries] == [
        (TopicPartition("bar", 0), (7, 8), ("any", "any")),
        (TopicPartition("foo", 0), (3,), ("any",)),
        (TopicPartition("foo", 1), (1, 2), ("any", "any")),
    ]


def test_reassignment_json_log_dirs():
    entry = files.parse_reassignment_json(
        '{"version":1,"partitions":[{"topic":"foo","partition":1,"replicas":[1,2,3],"log_dirs":["any","/abs/dir","any"]}]}'
    )[0]
    assert entry.log_dir_moves == {2: "/abs/dir"}
    formatted = files.format_reassignment_json({("foo", 1): [1, 2, 3]}, {(TopicPartition("foo", 1), 2): "/abs/dir"})
    assert '"log_dirs":["any","/abs/dir","any"]' in formatted


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "The input string shouldn't be empty\n at [Source: UNKNOWN; line: -1, column: -1]"),
        (
            "{",
            "Unexpected end-of-input: expected close marker for Object (start marker at "
            '[Source: (String)"{"; line: 1, column: 1])\n at [Source: (String)"{"; line: 1, column: 2]',
        ),
        ('{"version":2}', "Not supported version field value 2"),
        ('{"partitions":[{"topic":"foo","partition":0}]}', "No such field exists: `replicas`"),
        (
            '{"partitions":[{"topic":"foo","partition":4294967296,"replicas":[1]}]}',
            "Expected `Int` value, received 4294967296",
        ),
        ('{"partitions":[{"topic":"foo","partition":0,"replicas":[1,true]}]}', "Expected `Int` value, received true"),
        (
            '{"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}',
            "Size of replicas list List(1, 2) is different from size of log dirs list List(any) for partition foo-0",
        ),
    ],
)
def test_reassignment_json_errors(text, message):
    with pytest.raises((AdminOperationError, InvalidArgumentError)) as caught:
        files.parse_reassignment_json(text)
    assert str(caught.value) == message


def test_reassignment_entry_checks_are_kafkas_in_kafkas_order():
    def entries(document):
        return files.parse_reassignment_json(json.dumps({"partitions": document}))

    with pytest.raises(InvalidArgumentError, match=r"^Partition reassignment list cannot be empty$"):
        files.check_reassignment_entries([])
    with pytest.raises(InvalidArgumentError, match=r"^Partition replica list cannot be empty$"):
        files.check_reassignment_entries(entries([{"topic": "a", "partition": 0, "replicas": []}]))
    with pytest.raises(
        InvalidArgumentError, match=r"^Partition reassignment contains duplicate topic partitions: a-0$"
    ):
        files.check_reassignment_entries(
            entries([{"topic": "a", "partition": 0, "replicas": [1]}, {"topic": "a", "partition": 0, "replicas": [2]}])
        )
    with pytest.raises(
        InvalidArgumentError,
        match=r"^Partition replica lists may not contain duplicate entries: a-0 contains multiple entries for 1\. "
        r"b-1 contains multiple entries for 2$",
    ):
        files.check_reassignment_entries(
            entries(
                [
                    {"topic": "a", "partition": 0, "replicas": [1, 1]},
                    {"topic": "b", "partition": 1, "replicas": [2, 3, 2]},
                ]
            )
        )


def test_partition_sizes_ours_and_kafka_log_dirs():
    ours = '{"version":1,"partitions":[{"topic":"foo","partition":0,"size":10},{"topic":"foo","partition":1,"size":0}]}'
    assert files.parse_partition_sizes_json(ours) == {("foo", 0): 10, ("foo", 1): 0}
    log_dirs = json.dumps(
        {
            "version": 1,
            "brokers": [
                {"broker": 0, "logDirs": [{"logDir": "/d", "error": None, "partitions": [
                    {"partition": "foo-bar-0", "size": 5, "offsetLag": 0, "isFuture": False},
                    {"partition": "foo-bar-1", "size": 99, "offsetLag": 0, "isFuture": True},
                ]}]},
                {"broker": 1, "logDirs": [{"logDir": "/d", "error": None, "partitions": [
                    {"partition": "foo-bar-0", "size": 7, "offsetLag": 2, "isFuture": False},
                ]}]},
            ],
        }
    )  # fmt: skip
    assert files.parse_partition_sizes_json(log_dirs) == {("foo-bar", 0): 7}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"partitions":[{"topic":"a","partition":0,"size":-1}]}',
            "Expected a size in bytes (a non-negative integer), received -1",
        ),
        (
            '{"partitions":[{"topic":"a","partition":0,"size":1},{"topic":"a","partition":0,"size":2}]}',
            "Partition sizes contain duplicate topic partitions: a-0",
        ),
        (
            '{"brokers":[{"broker":0,"logDirs":[{"partitions":[{"partition":"nodash","size":1}]}]}]}',
            'Not a topic partition: "nodash"',
        ),
        ('{"version":1}', "No such field exists: `partitions`"),
    ],
)
def test_partition_sizes_errors(text, message):
    with pytest.raises(InvalidArgumentError) as caught:
        files.parse_partition_sizes_json(text)
    assert str(caught.value) == message


def test_select_current_and_target_brokers():
    assignment = {("a", 1): [1], ("a", 0): [2], ("b", 0): [1]}
    assert list(files.select_current(assignment, ["a"])) == [("a", 0), ("a", 1)]
    with pytest.raises(UnknownTopicOrPartitionError, match=r"^Topic c not found\.$"):
        files.select_current(assignment, ["a", "c"])
    assert files.target_brokers([2, 1], {1: "r1", 2: "r2", 3: None}, rack_aware=True) == {1: "r1", 2: "r2"}
    assert files.target_brokers([2, 1], {1: "r1", 2: "r2"}, rack_aware=False) == {1: None, 2: None}
    with pytest.raises(InvalidArgumentError, match=r"^The broker list contains brokers that are not registered: 7,9$"):
        files.target_brokers([1, 7, 9], {1: None}, rack_aware=True)
    with pytest.raises(AdminOperationError, match=r"^Not all brokers have rack information"):
        files.target_brokers([1, 3], {1: "r1", 3: None}, rack_aware=True)
    assert files.target_brokers([1, 2], None, True, {1: "a", 2: "b"}) == {1: "a", 2: "b"}


def test_broker_racks_option():
    assert files.parse_broker_racks("0:rack-a,1:rack-b") == {0: "rack-a", 1: "rack-b"}
    with pytest.raises(InvalidArgumentError, match=r'^Invalid --broker-racks entry "0"'):
        files.parse_broker_racks("0")

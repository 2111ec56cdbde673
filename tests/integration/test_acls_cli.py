"""kafkaops acls through ZooKeeper (`--authorizer-properties zookeeper.connect=...`) against a real ZooKeeper:
the ACL znodes and change notifications byte for byte as Kafka 2.8's AclAuthorizer writes them, and
kafka-acls.sh's texts, checks and exit codes."""

from __future__ import annotations

import json

import pytest

ADDED_T = (
    "Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`: \n"
    " \t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW) \n\n"
)
CURRENT_T = ADDED_T.replace("Adding ACLs", "Current ACLs")


@pytest.fixture
def acls(run_cli, zk_connect):
    def run(*args: str, input: str | None = None):
        from typer.testing import CliRunner

        from kafkaops.cli.app import app

        command = ["acls", "--authorizer-properties", f"zookeeper.connect={zk_connect}", *args]
        if input is None:
            return run_cli(*command)
        return CliRunner().invoke(app, command, input=input, catch_exceptions=False)

    return run


def data(zk, path):
    entry = zk.get(path)
    return None if entry is None else entry[0]


def changes(zk, root="/kafka-acl-changes"):
    return [data(zk, f"{root}/{child}") for child in sorted(zk.get_children(root) or [])]


def test_add_literal_writes_kafkas_znode_and_notification(acls, zk):
    result = acls("--add", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "t")
    assert result.exit_code == 0
    assert result.stdout == ADDED_T + CURRENT_T
    assert data(zk, "/kafka-acl/Topic/t") == (
        b'{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Write","host":"*"}]}'
    )
    assert changes(zk) == [b"TOPIC:t"]
    # Kafka's createAclPaths: every resource type under both stores, both change paths
    assert set(zk.get_children("/kafka-acl")) == {"Topic", "Group", "Cluster", "TransactionalId", "DelegationToken"}
    assert set(zk.get_children("/kafka-acl-extended/prefixed")) == set(zk.get_children("/kafka-acl"))


def test_add_again_appends_conditionally_and_the_same_acl_changes_nothing(acls, zk):
    acls("--add", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "t")
    acls("--add", "--deny-principal", "User:bob", "--deny-host", "10.0.0.1", "--operation", "Read", "--topic", "t")
    assert json.loads(data(zk, "/kafka-acl/Topic/t"))["acls"] == [
        {"principal": "User:alice", "permissionType": "Allow", "operation": "Write", "host": "*"},
        {"principal": "User:bob", "permissionType": "Deny", "operation": "Read", "host": "10.0.0.1"},
    ]
    assert zk.get("/kafka-acl/Topic/t")[1].version == 1
    acls("--add", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "t")
    assert changes(zk) == [b"TOPIC:t", b"TOPIC:t"]  # no change, no notification


def test_prefixed_pattern_path_and_extended_notification(acls, zk):
    result = acls(
        "--add",
        "--allow-principal",
        "User:alice",
        "--operation",
        "Read",
        "--group",
        "app-",
        "--resource-pattern-type",
        "prefixed",
    )
    assert result.exit_code == 0, result.stdout
    assert "ResourcePattern(resourceType=GROUP, name=app-, patternType=PREFIXED)" in result.stdout
    assert json.loads(data(zk, "/kafka-acl-extended/prefixed/Group/app-"))["acls"][0]["operation"] == "Read"
    assert changes(zk, "/kafka-acl-extended-changes") == [
        b'{"version":1,"resourceType":"GROUP","name":"app-","patternType":"PREFIXED"}'
    ]
    assert changes(zk) == []


def test_producer_and_consumer_conveniences(acls, zk):
    result = acls(
        "--add", "--producer", "--idempotent", "--allow-principal", "User:p", "--topic", "t", "--transactional-id", "tx"
    )
    assert result.exit_code == 0, result.stdout
    ops = lambda path: [(a["operation"], a["permissionType"]) for a in json.loads(data(zk, path))["acls"]]  # noqa: E731
    assert ops("/kafka-acl/Topic/t") == [("Write", "Allow"), ("Describe", "Allow"), ("Create", "Allow")]
    assert ops("/kafka-acl/TransactionalId/tx") == [("Write", "Allow"), ("Describe", "Allow")]
    assert ops("/kafka-acl/Cluster/kafka-cluster") == [("IdempotentWrite", "Allow")]
    result = acls("--add", "--consumer", "--allow-principal", "User:c", "--topic", "t", "--group", "g")
    assert result.exit_code == 0, result.stdout
    assert ops("/kafka-acl/Topic/t")[3:] == [("Read", "Allow"), ("Describe", "Allow")]
    assert ops("/kafka-acl/Group/g") == [("Read", "Allow")]


def test_list_all_and_by_principal(acls):
    acls("--add", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "t")
    acls("--add", "--allow-principal", "User:bob", "--topic", "u")
    listed = acls("--list")
    assert listed.exit_code == 0
    assert CURRENT_T in listed.stdout and "name=u" in listed.stdout and "operation=ALL" in listed.stdout
    mine = acls("--list", "--principal", "User:bob")
    assert mine.stdout.startswith("ACLs for principal `User:bob`\n")
    assert "User:alice" not in mine.stdout and "name=t" not in mine.stdout
    as_json = json.loads(acls("--list", "--topic", "t", "--output", "json").stdout)
    assert as_json == {
        "acls": [
            {
                "resourceType": "TOPIC",
                "name": "t",
                "patternType": "LITERAL",
                "acls": [{"principal": "User:alice", "host": "*", "operation": "WRITE", "permissionType": "ALLOW"}],
            }
        ]
    }


def test_remove_asks_unless_forced_and_deletes_the_empty_znode(acls, zk):
    acls("--add", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "t")
    declined = acls("--remove", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "t", input="n\n")
    assert declined.stdout.startswith(
        "Are you sure you want to remove ACLs: \n \t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW) \n"
        " from resource filter `ResourcePatternFilter(resourceType=TOPIC, name=t, patternType=LITERAL)`? (y/n)\n"
    )
    assert zk.exists("/kafka-acl/Topic/t")
    removed = acls("--remove", "--topic", "t", "--force")
    assert removed.exit_code == 0 and removed.stdout == ""
    assert not zk.exists("/kafka-acl/Topic/t")
    assert changes(zk) == [b"TOPIC:t", b"TOPIC:t"]


def test_remove_with_match_removes_what_applies_to_a_name(acls, zk):
    acls("--add", "--allow-principal", "User:a", "--operation", "Read", "--topic", "*")
    acls(
        "--add",
        "--allow-principal",
        "User:a",
        "--operation",
        "Read",
        "--topic",
        "or",
        "--resource-pattern-type",
        "prefixed",
    )
    acls("--add", "--allow-principal", "User:a", "--operation", "Read", "--topic", "other")
    asked = acls("--remove", "--topic", "orders", "--resource-pattern-type", "match", input="y\n")
    assert asked.stdout.startswith(
        "Are you sure you want to delete all ACLs for resource filter "
        "`ResourcePatternFilter(resourceType=TOPIC, name=orders, patternType=MATCH)`? (y/n)\n"
    )
    assert not zk.exists("/kafka-acl/Topic/*") and not zk.exists("/kafka-acl-extended/prefixed/Topic/or")
    assert zk.exists("/kafka-acl/Topic/other")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--topic", "t"], "Command must include exactly one action: --list, --add, --remove. "),
        (["--add", "--producer", "--allow-principal", "User:a"], "With --producer you must specify a --topic"),
        (
            ["--add", "--principal", "User:a", "--topic", "t"],
            "The --principal option is only available if --list is set",
        ),
        (["--list", "--allow-principal", "User:a"], 'Option "[list]" can\'t be used with option "[allow-principal]"'),
        (
            ["--add", "--producer", "--topic", "t", "--operation", "Read"],
            'Option "[producer]" can\'t be used with option "[operation]"',
        ),
        (["--add", "--idempotent", "--topic", "t"], "The --idempotent option is only available if --producer is set"),
        (
            ["--add", "--consumer", "--topic", "t", "--allow-principal", "User:a"],
            "With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id "
            "option should be specified.",
        ),
        (
            ["--add", "--allow-principal", "User:a"],
            "You must provide at least one resource: --topic <topic> or "
            "--cluster or --group <group> or --delegation-token <Delegation Token ID>",
        ),
        (
            ["--add", "--allow-principal", "User:a", "--topic", "t", "--resource-pattern-type", "match"],
            "A '--resource-pattern-type' value of 'MATCH' is not valid when adding acls.",
        ),
        (
            ["--add", "--topic", "t"],
            "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.",
        ),
        (
            ["--add", "--allow-principal", "User:a", "--group", "g", "--operation", "Write"],
            "ResourceType GROUP only supports operations READ,DESCRIBE,DELETE,ALL",
        ),
        (["--list", "--resource-pattern-type", "glob"], "Unknown resource-pattern-type: glob"),
        (
            ["--list", "--command-config", "x.properties"],
            "The --command-config option can only be used with --bootstrap-server option",
        ),
    ],
)
def test_option_checks_say_what_kafka_says_and_change_nothing(acls, zk_tree, args, message):
    before = zk_tree()
    result = acls(*args)
    assert result.exit_code == 1
    assert result.stderr.startswith(message + "\n")
    assert zk_tree() == before


def test_bootstrap_server_and_authorizer_properties_exclude_each_other(run_cli):
    result = run_cli(
        "acls", "--list", "--bootstrap-server", "localhost:1", "--authorizer-properties", "zookeeper.connect=x"
    )
    assert result.exit_code == 1
    assert result.stderr.startswith("The --authorizer-properties option can only be used with --authorizer option\n")


def test_a_bad_principal_fails_the_command(acls, zk):
    result = acls("--add", "--allow-principal", "alice", "--topic", "t")
    assert result.exit_code == 1
    assert "expected a string in format principalType:principalName but got alice" in result.stdout
    assert not zk.exists("/kafka-acl/Topic/t")

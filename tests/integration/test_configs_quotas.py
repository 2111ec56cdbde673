"""kafkaops configs for client quotas (users, clients, <user, client-id>, defaults) against a real ZooKeeper:
the znodes and change notifications Kafka 2.8's ConfigCommand writes, and its texts."""

from __future__ import annotations

import json

import pytest

QUOTAS = "producer_byte_rate=1024,consumer_byte_rate=2048,request_percentage=200"


def notifications(zk):
    return [
        json.loads(zk.get("/config/changes/" + child)[0])["entity_path"]
        for child in sorted(zk.get_children("/config/changes") or [])
    ]


def config_of(zk, path):
    return json.loads(zk.get(path)[0])


def alter(run_cli, *entity, add=QUOTAS):
    result = run_cli("configs", "--alter", *entity, "--add-config", add)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_user_quota(zk, run_cli):
    out = alter(run_cli, "--entity-type", "users", "--entity-name", "CN=alice smith,O=x")
    assert out == "Completed updating config for entity: user-principal 'CN=alice smith,O=x'.\n"
    # the name sanitized as Kafka's Sanitizer does (URL-encoded, space as %20)
    assert config_of(zk, "/config/users/CN%3Dalice%20smith%2CO%3Dx") == {
        "version": 1,
        "config": {"producer_byte_rate": "1024", "consumer_byte_rate": "2048", "request_percentage": "200"},
    }
    assert notifications(zk) == ["users/CN%3Dalice%20smith%2CO%3Dx"]
    described = run_cli("configs", "--describe", "--entity-type", "users", "--entity-name", "CN=alice smith,O=x")
    # java.util.Properties order (Java 9+), as Kafka prints it
    assert described.stdout == (
        "Configs for user-principal 'CN=alice smith,O=x' are "
        "request_percentage=200,producer_byte_rate=1024,consumer_byte_rate=2048\n"
    )
    deleted = run_cli("configs", "--alter", "--user", "CN=alice smith,O=x", "--delete-config", "consumer_byte_rate")
    assert deleted.exit_code == 0, deleted.stderr
    assert config_of(zk, "/config/users/CN%3Dalice%20smith%2CO%3Dx")["config"] == {
        "producer_byte_rate": "1024",
        "request_percentage": "200",
    }
    assert len(notifications(zk)) == 2


@pytest.mark.parametrize(
    "entity",
    [
        ["--entity-type", "users", "--entity-name", "u1", "--entity-type", "clients", "--entity-name", "c1"],
        ["--entity-type", "clients", "--entity-name", "c1", "--entity-type", "users", "--entity-name", "u1"],
        ["--user", "u1", "--client", "c1"],
    ],
)
def test_user_and_client_together(zk, run_cli, entity):
    out = alter(run_cli, *entity, add="producer_byte_rate=1024")
    assert out == "Completed updating config for entity: user-principal 'u1', client-id 'c1'.\n"
    assert config_of(zk, "/config/users/u1/clients/c1") == {"version": 1, "config": {"producer_byte_rate": "1024"}}
    assert notifications(zk) == ["users/u1/clients/c1"]
    described = run_cli("configs", "--describe", *entity)
    assert described.stdout == "Configs for user-principal 'u1', client-id 'c1' are producer_byte_rate=1024\n"


@pytest.mark.parametrize(
    "entity, path, text",
    [
        (["--entity-type", "clients", "--entity-default"], "clients/<default>", "default client-id"),
        (["--client-defaults"], "clients/<default>", "default client-id"),
        (["--entity-type", "users", "--entity-default"], "users/<default>", "default user-principal"),
        (
            ["--entity-type", "users", "--entity-default", "--entity-type", "clients", "--entity-name", "c1"],
            "users/<default>/clients/c1",
            "default user-principal, client-id 'c1'",
        ),
        (
            ["--entity-type", "users", "--entity-name", "u1", "--entity-type", "clients", "--entity-default"],
            "users/u1/clients/<default>",
            "user-principal 'u1', default client-id",
        ),
        (
            ["--entity-type", "clients", "--entity-default", "--entity-type", "users", "--entity-name", "u1"],
            "users/u1/clients/<default>",
            "user-principal 'u1', default client-id",
        ),
        (["--user-defaults", "--client", "c1"], "users/<default>/clients/c1", "default user-principal, client-id 'c1'"),
        (
            ["--entity-type", "users", "--entity-default", "--entity-type", "clients", "--entity-default"],
            "users/<default>/clients/<default>",
            "default user-principal, default client-id",
        ),
    ],
)
def test_defaults(zk, run_cli, entity, path, text):
    assert alter(run_cli, *entity, add="consumer_byte_rate=10") == f"Completed updating config for entity: {text}.\n"
    assert config_of(zk, "/config/" + path) == {"version": 1, "config": {"consumer_byte_rate": "10"}}
    assert notifications(zk) == [path]
    assert run_cli("configs", "--describe", *entity).stdout == f"Configs for {text} are consumer_byte_rate=10\n"


def test_describe_all(zk, run_cli):
    alter(run_cli, "--entity-type", "clients", "--entity-name", "c1", add="producer_byte_rate=1")
    alter(run_cli, "--entity-type", "clients", "--entity-default", add="producer_byte_rate=2")
    alter(run_cli, "--entity-type", "users", "--entity-name", "u1", add="producer_byte_rate=3")
    alter(run_cli, "--user", "u2", "--client", "c1", add="producer_byte_rate=4")
    alter(run_cli, "--user", "u2", "--client", "c2", add="producer_byte_rate=5")
    alter(run_cli, "--user", "u1", "--client-defaults", add="producer_byte_rate=6")

    def describe(*args):
        result = run_cli("configs", "--describe", *args)
        assert result.exit_code == 0, result.stderr
        return result.stdout.splitlines()

    assert describe("--entity-type", "clients") == [
        "Configs for default client-id are producer_byte_rate=2",
        "Configs for client-id 'c1' are producer_byte_rate=1",
    ]
    # u2's znode holds only <user, client-id> quotas: left out, as Kafka does
    assert describe("--entity-type", "users") == ["Configs for user-principal 'u1' are producer_byte_rate=3"]
    assert describe("--entity-type", "users", "--entity-name", "u2") == ["Configs for user-principal 'u2' are "]
    assert describe("--entity-type", "users", "--entity-name", "u2", "--entity-type", "clients") == [
        "Configs for user-principal 'u2', client-id 'c1' are producer_byte_rate=4",
        "Configs for user-principal 'u2', client-id 'c2' are producer_byte_rate=5",
    ]
    assert describe("--entity-type", "users", "--entity-type", "clients") == [
        "Configs for user-principal 'u1', default client-id are producer_byte_rate=6",
        "Configs for user-principal 'u2', client-id 'c1' are producer_byte_rate=4",
        "Configs for user-principal 'u2', client-id 'c2' are producer_byte_rate=5",
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--alter", "--entity-type", "users", "--entity-name", "u1", "--add-config", "bogus=1"],
            "requirement failed: Unknown Dynamic Configuration: HashSet(bogus).",
        ),
        (
            ["--alter", "--entity-type", "clients", "--entity-name", "c1", "--add-config", "retention.ms=1"],
            "requirement failed: Unknown Dynamic Configuration: HashSet(retention.ms).",
        ),
        (
            ["--alter", "--entity-type", "clients", "--entity-name", "c1", "--add-config", "producer_byte_rate=fast"],
            "Invalid value fast for configuration producer_byte_rate: Not a number of type LONG",
        ),
        (
            ["--alter", "--entity-type", "users", "--entity-default", "--add-config", "request_percentage=lots"],
            "Invalid value lots for configuration request_percentage: Not a number of type DOUBLE",
        ),
        (
            ["--alter", "--entity-type", "clients", "--entity-name", "c1", "--delete-config", "consumer_byte_rate"],
            "Invalid config(s): consumer_byte_rate",
        ),
        (
            [
                "--alter",
                "--entity-type",
                "users",
                "--entity-name",
                "u1",
                "--entity-type",
                "clients",
                "--add-config",
                "producer_byte_rate=1",
            ],
            "--entity-name or --entity-default must be specified with each --entity-type for --alter",
        ),
        (
            ["--alter", "--entity-type", "clients", "--add-config", "producer_byte_rate=1"],
            "an entity-name or default entity must be specified with --alter of users, clients, brokers or ips",
        ),
        (
            ["--describe", "--entity-type", "users", "--entity-type", "topics"],
            "Only 'users' and 'clients' entity types may be specified together",
        ),
        (
            ["--describe", "--entity-type", "users", "--entity-type", "users"],
            "Duplicate entity type(s) specified: users",
        ),
    ],
)
def test_bad_input_changes_nothing(zk, zk_tree, run_cli, args, message):
    alter(run_cli, "--entity-type", "clients", "--entity-name", "c1", add="producer_byte_rate=7")
    before = zk_tree()
    result = run_cli("configs", *args)
    assert result.exit_code == 1
    assert result.stderr == message + "\n"
    assert result.stdout == ""
    assert zk_tree() == before


def test_json_output(run_cli):
    alter(run_cli, "--user", "u1", "--client", "c1", add="producer_byte_rate=1")
    described = json.loads(
        run_cli("configs", "--describe", "--user", "u1", "--client", "c1", "--output", "json").stdout
    )
    assert described == [
        {
            "entity": "user-principal 'u1', client-id 'c1'",
            "entity_type": "users",
            "name": "u1",
            "child": {"entity_type": "clients", "name": "c1"},
            "config": {"producer_byte_rate": "1"},
        }
    ]


def test_a_client_named_default_is_not_the_default_client(zk, run_cli):
    out = alter(run_cli, "--entity-type", "clients", "--entity-name", "<default>", add="producer_byte_rate=1")
    assert out == "Completed updating config for entity: client-id '<default>'.\n"
    assert config_of(zk, "/config/clients/%3Cdefault%3E") == {"version": 1, "config": {"producer_byte_rate": "1"}}
    assert not zk.exists("/config/clients/<default>")


def test_scram_credentials_are_kept_beside_quotas(zk, run_cli):
    # a user whose znode Kafka wrote with a SCRAM credential
    credential = "salt=c2FsdA==,stored_key=a2V5,server_key=a2V5,iterations=4096"
    zk.ensure_paths(["/config/users"])
    zk.create("/config/users/alice", json.dumps({"version": 1, "config": {"SCRAM-SHA-256": credential}}).encode())
    alter(run_cli, "--entity-type", "users", "--entity-name", "alice", add="producer_byte_rate=10")
    assert config_of(zk, "/config/users/alice")["config"] == {
        "SCRAM-SHA-256": credential,
        "producer_byte_rate": "10",
    }

"""SCRAM users in ZooKeeper as Kafka 2.8 stores them: `kafkaops configs --zookeeper --entity-type users` (Kafka's
`preProcessScramCredentials`) and the brokers' DescribeUserScramCredentials / AlterUserScramCredentials logic
(`ZkAdminManager`), against a real ZooKeeper."""

from __future__ import annotations

import json

import pytest

from kafkaops.admin import user_scram_credentials as scram_users
from kafkaops.cluster.common.scram import ScramCredential, ScramMechanism, client_key, salted_password, stored_key


def config_of(zk, user):  # type: ignore[no-untyped-def]
    return json.loads(zk.get(f"/config/users/{user}")[0])


def check_password(text: str, mechanism: ScramMechanism, password: str, iterations: int) -> None:
    credential = ScramCredential.from_string(text)
    assert credential.iterations == iterations
    salted = salted_password(mechanism, password, credential.salt, iterations)
    assert stored_key(mechanism, client_key(mechanism, salted)) == credential.stored_key


def test_add_describe_delete_with_zookeeper(zk, run_cli) -> None:  # type: ignore[no-untyped-def]
    done = run_cli(
        "configs", "--alter", "--entity-type", "users", "--entity-name", "alice",
        "--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-512]",
    )  # fmt: skip
    assert (done.exit_code, done.stdout) == (0, "Completed updating config for entity: user-principal 'alice'.\n")
    stored = config_of(zk, "alice")
    assert stored["version"] == 1 and sorted(stored["config"]) == ["SCRAM-SHA-256", "SCRAM-SHA-512"]
    check_password(stored["config"]["SCRAM-SHA-256"], ScramMechanism.SCRAM_SHA_256, "alice-secret", 8192)
    check_password(stored["config"]["SCRAM-SHA-512"], ScramMechanism.SCRAM_SHA_512, "alice-512", 4096)
    [notification] = zk.get_children("/config/changes")
    assert json.loads(zk.get(f"/config/changes/{notification}")[0]) == {"version": 2, "entity_path": "users/alice"}
    described = run_cli("configs", "--describe", "--entity-type", "users", "--entity-name", "alice")
    assert described.stdout.startswith("Configs for user-principal 'alice' are SCRAM-SHA-")
    assert "SCRAM-SHA-256=salt=" in described.stdout and ",iterations=8192" in described.stdout
    assert "alice-secret" not in described.stdout
    done = run_cli("configs", "--alter", "--user", "alice", "--delete-config", "SCRAM-SHA-256")
    assert done.exit_code == 0, done.stderr
    assert list(config_of(zk, "alice")["config"]) == ["SCRAM-SHA-512"]


@pytest.mark.parametrize(
    ("add", "message"),
    [
        (
            "SCRAM-SHA-256=[iterations=100,password=x]",
            "Iterations 100 is less than the minimum 4096 required for SCRAM_SHA_256",
        ),
        ("SCRAM-SHA-512=secret", "Invalid credential property SCRAM_SHA_512=secret"),
    ],
)
def test_bad_credentials_change_nothing(zk, run_cli, zk_tree, add: str, message: str) -> None:  # type: ignore[no-untyped-def]
    zk.ensure_paths(["/config/users", "/config/changes"])
    before = zk_tree()
    refused = run_cli("configs", "--alter", "--user", "bob", "--add-config", add)
    assert (refused.exit_code, refused.stdout + refused.stderr) == (1, message + "\n")
    assert zk_tree() == before


def upsertion(user: str, mechanism: int = 1, iterations: int = 4096, password: str = "pw") -> dict[str, object]:
    salt = b"salty"
    scram = ScramMechanism.from_type(mechanism) or ScramMechanism.SCRAM_SHA_256
    return {
        "name": user,
        "mechanism": mechanism,
        "iterations": iterations,
        "salt": salt,
        "salted_password": salted_password(scram, password, salt, iterations),
    }


def test_admin_api_alter_and_describe(zk) -> None:  # type: ignore[no-untyped-def]
    zk.ensure_paths(["/config/users"])
    answer = scram_users.alter_user_scram_credentials(
        zk,
        [
            upsertion("carol"),
            upsertion("carol", mechanism=2, iterations=8192),
            upsertion(""),
            upsertion("dan", mechanism=9),
            upsertion("erin", iterations=100),
            upsertion("fay", iterations=20000),
            upsertion("gus"),
            upsertion("gus"),
        ],
        [{"name": "hal", "mechanism": 1}],
    )
    results = {r["user"]: (r["error_code"], r["error_message"]) for r in answer["results"]}
    assert results == {
        "carol": (0, None),
        "": (93, "Username must not be empty"),
        "dan": (33, "Unknown SCRAM mechanism"),
        "erin": (93, "Too few iterations"),
        "fay": (93, "Too many iterations"),
        "gus": (92, "A user credential cannot be altered twice in the same request"),
        "hal": (91, "Attempt to delete a user credential that does not exist"),
    }
    assert sorted(zk.get_children("/config/users")) == ["carol"]
    check_password(config_of(zk, "carol")["config"]["SCRAM-SHA-512"], ScramMechanism.SCRAM_SHA_512, "pw", 8192)
    described = scram_users.describe_user_scram_credentials(zk, None)
    assert described["results"] == [
        {
            "user": "carol",
            "error_code": 0,
            "error_message": None,
            "credential_infos": [{"mechanism": 1, "iterations": 4096}, {"mechanism": 2, "iterations": 8192}],
        }
    ]
    described = scram_users.describe_user_scram_credentials(zk, ["nobody", "carol", "x", "x", ""])
    assert [(r["user"], r["error_code"], r["error_message"]) for r in described["results"]] == [
        ("nobody", 91, "Attempt to describe a user credential that does not exist: nobody"),
        ("carol", 0, None),
        ("x", 92, "Cannot describe SCRAM credentials for the same user twice in a single request: x"),
        ("", 91, "Username must not be empty"),
    ]

"""Users' SCRAM credentials, stored in `/config/users/<user>` beside their quotas (Kafka's `ConfigCommand`
for `--entity-type users --add-config 'SCRAM-SHA-256=[iterations=8192,password=...]'`, and `ZkAdminManager`'s
DescribeUserScramCredentials / AlterUserScramCredentials).

    {"version":1,"config":{"SCRAM-SHA-256":"salt=...,stored_key=...,server_key=...,iterations=8192"}}

The password never reaches ZooKeeper: kafka-configs --zookeeper salts and hashes it itself
(`preprocess_scram_credentials`); with --bootstrap-server the tool salts it (`scram_upsertion`) and the broker
derives the stored and server keys (`alter_user_scram_credentials`). A config change notification follows each
write, on which every broker's credential cache takes the new credentials at once.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from kafkaops.admin.client_quotas import validate_quota_config
from kafkaops.cluster.common.errors import (
    BrokerError,
    DuplicateResourceError,
    InvalidArgumentError,
    KafkaOpsError,
    ResourceNotFoundError,
    UnacceptableCredentialError,
    UnknownServerError,
    UnsupportedSaslMechanismError,
)
from kafkaops.cluster.common.scram import (
    DEFAULT_ITERATIONS,
    MAX_ITERATIONS,
    ScramCredential,
    ScramMechanism,
    credential_from_salted_password,
    generate_credential,
    salted_password,
    secure_random_string,
)
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.znodes import ConfigType, desanitize_entity_name, sanitize_entity_name

_ZK_PATTERN = re.compile(r"(?:iterations=([0-9]*),)?password=(.*)", re.DOTALL)
_ADMIN_PATTERN = re.compile(r"(?:iterations=(-?[0-9]*),)?password=(.*)", re.DOTALL)

USERNAME_MUST_NOT_BE_EMPTY = "Username must not be empty"
DESCRIBE_USER_THAT_DOES_NOT_EXIST = "Attempt to describe a user credential that does not exist"


def _iterations_and_password(mechanism: ScramMechanism, value: str, pattern: re.Pattern[str]) -> tuple[int, str]:
    match = pattern.fullmatch(value)
    if match is None:
        raise InvalidArgumentError(f"Invalid credential property {mechanism}={value}")
    text, password = match.group(1), match.group(2)
    try:
        iterations = DEFAULT_ITERATIONS if text is None or text == "-1" else int(text)
    except ValueError:  # `iterations=,`: Java's Integer.parseInt("")
        raise InvalidArgumentError('For input string: ""') from None
    return iterations, password


def preprocess_scram_credentials(add: Mapping[str, str]) -> dict[str, str]:
    """`ConfigCommand.preProcessScramCredentials`: each `SCRAM-SHA-*=[iterations=N,]password=P` becomes the
    stored credential string; other keys pass as they are. Raises InvalidArgumentError with Kafka's texts."""
    processed = dict(add)
    for mechanism in ScramMechanism:
        value = add.get(mechanism.mechanism_name)
        if value is None:
            continue
        iterations, password = _iterations_and_password(mechanism, value, _ZK_PATTERN)
        if iterations < mechanism.min_iterations:
            raise InvalidArgumentError(
                f"Iterations {iterations} is less than the minimum {mechanism.min_iterations} required for {mechanism}"
            )
        processed[mechanism.mechanism_name] = generate_credential(mechanism, password, iterations).to_string()
    return processed


def scram_credential_infos(config: Mapping[str, str]) -> list[tuple[ScramMechanism, int]]:
    """The mechanisms a user's config has credentials for, with their iterations. Raises ValueError for a
    credential string that does not parse."""
    return [
        (mechanism, ScramCredential.from_string(config[mechanism.mechanism_name]).iterations)
        for mechanism in ScramMechanism
        if mechanism.mechanism_name in config
    ]


# --- the tool's side of AlterUserScramCredentials --------------------------------------------------------


def scram_alterations(
    user: str, add: Mapping[str, str], delete: Sequence[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`ConfigCommand.alterUserScramCredentialConfigs` and the admin client's `getSaltedPasword`: the
    deletions and upsertions of an AlterUserScramCredentials request. Raises InvalidArgumentError."""
    deletions = []
    for name in delete:
        mechanism = ScramMechanism.for_mechanism_name(name)
        if mechanism is not None:
            deletions.append({"name": user, "mechanism": mechanism.type_byte})
    upsertions = []
    for name, value in add.items():
        mechanism = ScramMechanism.for_mechanism_name(name)
        if mechanism is None:
            continue
        iterations, password = _iterations_and_password(mechanism, value, _ADMIN_PATTERN)
        if iterations < mechanism.min_iterations:
            raise InvalidArgumentError(
                f"Iterations {iterations} is less than the minimum {mechanism.min_iterations} required for "
                f"{mechanism.mechanism_name}"
            )
        salt = secure_random_string().encode()
        upsertions.append(
            {
                "name": user,
                "mechanism": mechanism.type_byte,
                "iterations": iterations,
                "salt": salt,
                "salted_password": salted_password(mechanism, password, salt, iterations),
            }
        )
    return deletions, upsertions


# --- the broker's side (ZkAdminManager) -------------------------------------------------------------------


def _error_of(error: Exception) -> tuple[int, str]:
    if isinstance(error, BrokerError):
        return error.code, error.message
    return UnknownServerError.code, str(error)


def describe_user_scram_credentials(zk: KafkaZkClient, users: Sequence[str] | None) -> dict[str, Any]:
    """`ZkAdminManager.describeUserScramCredentials`: every user with credentials (sorted) for None or [],
    else each named user once, in the order asked (RESOURCE_NOT_FOUND for one without credentials)."""
    results: dict[str, dict[str, Any]] = {}

    def add(user: str, config: Mapping[str, str], explicit: bool) -> None:
        result: dict[str, Any] = {"user": user, "error_code": 0, "error_message": None, "credential_infos": []}
        if any(m.mechanism_name in config for m in ScramMechanism):
            try:
                result["credential_infos"] = [
                    {"mechanism": m.type_byte, "iterations": i} for m, i in scram_credential_infos(config)
                ]
            except ValueError as error:
                result["error_code"], result["error_message"] = UnknownServerError.code, str(error)
            results[user] = result
        elif explicit:
            result["error_code"] = ResourceNotFoundError.code
            result["error_message"] = f"{DESCRIBE_USER_THAT_DOES_NOT_EXIST}: {user}"
            results[user] = result

    try:
        if not users:
            names = zk.get_all_entities(ConfigType.USER)
            for name, config in zk.get_entity_configs(ConfigType.USER, names).items():
                add(desanitize_entity_name(name), config, False)
            ordered = [results[user] for user in sorted(results)]
        else:
            counts = Counter(users)
            for user in users:
                if not user:
                    results[user] = _user_error(user, ResourceNotFoundError.code, USERNAME_MUST_NOT_BE_EMPTY)
                elif counts[user] > 1:
                    results[user] = _user_error(
                        user,
                        DuplicateResourceError.code,
                        f"Cannot describe SCRAM credentials for the same user twice in a single request: {user}",
                    )
                else:
                    config, _ = zk.get_entity_config(ConfigType.USER, sanitize_entity_name(user))
                    add(user, config, True)
            ordered = [results[user] for user in dict.fromkeys(users)]
    except KafkaOpsError as error:
        code, message = _error_of(error)
        return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "results": []}
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "results": ordered}


def _user_error(user: str, code: int, message: str) -> dict[str, Any]:
    return {"user": user, "error_code": code, "error_message": message, "credential_infos": []}


def _alter_error(user: str, code: int, message: str | None) -> dict[str, Any]:
    return {"user": user, "error_code": code, "error_message": message}


def _illegal(name: str, type_byte: int, iterations: int | None) -> tuple[int, str] | None:
    """Why one deletion (iterations None) or upsertion is refused before any user is read, if it is."""
    if not name:
        return UnacceptableCredentialError.code, USERNAME_MUST_NOT_BE_EMPTY
    mechanism = ScramMechanism.from_type(type_byte)
    if mechanism is None:
        return UnsupportedSaslMechanismError.code, "Unknown SCRAM mechanism"
    if iterations is not None and iterations < mechanism.min_iterations:
        return UnacceptableCredentialError.code, "Too few iterations"
    if iterations is not None and iterations > MAX_ITERATIONS:
        return UnacceptableCredentialError.code, "Too many iterations"
    return None


def alter_user_scram_credentials(
    zk: KafkaZkClient, upsertions: Sequence[Mapping[str, Any]], deletions: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """`ZkAdminManager.alterUserScramCredentials`: per user, every change or none. A user is refused for an
    empty name, an unknown mechanism or iterations out of [4096, 16384], a mechanism altered twice, or the
    deletion of a credential it does not have; the others' configs are written with a notification each."""
    results: list[dict[str, Any]] = []
    illegal: dict[str, tuple[int, str]] = {}
    for deletion in deletions:
        if (problem := _illegal(deletion["name"], deletion["mechanism"], None)) is not None:
            illegal[deletion["name"]] = problem
    for upsertion in upsertions:
        if (problem := _illegal(upsertion["name"], upsertion["mechanism"], upsertion["iterations"])) is not None:
            illegal[upsertion["name"]] = problem
    results.extend(_alter_error(user, code, message) for user, (code, message) in illegal.items())
    pairs = [(c["name"], c["mechanism"]) for c in [*upsertions, *deletions] if c["name"] not in illegal]
    duplicated = {user for (user, _), count in Counter(pairs).items() if count > 1}
    results.extend(
        _alter_error(user, DuplicateResourceError.code, "A user credential cannot be altered twice in the same request")
        for user in dict.fromkeys(user for user, _ in pairs if user in duplicated)
    )
    candidates = list(dict.fromkeys(user for user, _ in pairs if user not in duplicated))
    configs: dict[str, tuple[dict[str, str], int | None]] = {}
    for user in candidates:
        try:
            configs[user] = zk.get_entity_config(ConfigType.USER, sanitize_entity_name(user))
        except KafkaOpsError as error:
            results.append(_alter_error(user, *_error_of(error)))
    for user in candidates:
        if user not in configs:
            continue
        config, version = configs[user]
        mine_deleted = [d for d in deletions if d["name"] == user]
        if any(_mechanism_name(d["mechanism"]) not in config for d in mine_deleted):
            text = "Attempt to delete a user credential that does not exist"
            results.append(_alter_error(user, ResourceNotFoundError.code, text))
            continue
        new = dict(config)
        for deletion in mine_deleted:
            new.pop(_mechanism_name(deletion["mechanism"]), None)
        for upsertion in (u for u in upsertions if u["name"] == user):
            mechanism = ScramMechanism.from_type(upsertion["mechanism"])
            if mechanism is None:  # refused above
                continue
            credential = credential_from_salted_password(
                mechanism, upsertion["salt"], upsertion["salted_password"], upsertion["iterations"]
            )
            new[mechanism.mechanism_name] = credential.to_string()
        try:
            validate_quota_config(new, True)
            zk.set_entity_config_and_notify(ConfigType.USER, sanitize_entity_name(user), new, version)
        except KafkaOpsError as error:
            results.append(_alter_error(user, *_error_of(error)))
            continue
        results.append(_alter_error(user, 0, None))
    return {"throttle_time_ms": 0, "results": results}


def _mechanism_name(type_byte: int) -> str:
    mechanism = ScramMechanism.from_type(type_byte)
    return mechanism.mechanism_name if mechanism is not None else "UNKNOWN"

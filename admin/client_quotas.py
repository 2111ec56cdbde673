"""Client quotas (KIP-13, KIP-55, KIP-124): their config names, validation and entity rules.

Quotas live in the config znodes of users and clients (Kafka's `ConfigType.User` / `ConfigType.Client`):
`/config/users/<user>`, `/config/clients/<client-id>`, `/config/users/<user>/clients/<client-id>`, with
`<default>` for either name, user and client ids sanitized as Kafka's `Sanitizer` does. Which znode holds
which keys is Kafka's `AdminZkClient.changeUserOrUserClientIdConfig` / `changeClientIdConfig`: a user
alone takes the quota keys and the SCRAM credential keys (`DynamicConfig.User`), every other quota
entity the quota keys only (`DynamicConfig.Client`). The Admin API's DescribeClientQuotas and
AlterClientQuotas (Kafka's `ZkAdminManager`) read and write the same znodes, through the same validation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from kafkaops.cluster.common.config_types import ConfigKey, parse_value
from kafkaops.cluster.common.config_types import ConfigType as ValueType
from kafkaops.cluster.common.errors import (
    NONE,
    BrokerError,
    InvalidArgumentError,
    InvalidRequestError,
    KafkaOpsError,
    UnknownServerError,
    UnsupportedVersionError,
    from_code,
)
from kafkaops.cluster.common.jvm_text import (
    LONG_MAX,
    hash_map_order,
    java_double_string,
    java_string_hash,
    properties_order,
    scala_mutable_hash_set,
)
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.znodes import (
    DEFAULT_ENTITY_NAME,
    ConfigType,
    desanitize_entity_name,
    sanitize_entity_name,
    user_client_entity_path,
)

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")

# Kafka's QuotaConfigs.buildUserClientQuotaConfigDef, in its definition order (ConfigDef.parse reports
# the first bad value in this order)
_QUOTA_KEYS = (
    ConfigKey(PRODUCER_BYTE_RATE, ValueType.LONG, str(LONG_MAX)),
    ConfigKey(CONSUMER_BYTE_RATE, ValueType.LONG, str(LONG_MAX)),
    ConfigKey(REQUEST_PERCENTAGE, ValueType.DOUBLE, str(float(2**31 - 1))),
    ConfigKey(CONTROLLER_MUTATION_RATE, ValueType.DOUBLE, str(float(2**31 - 1))),
)
CLIENT_CONFIGS: dict[str, ConfigKey] = {key.name: key for key in _QUOTA_KEYS}
"""`DynamicConfig.Client`: clients, <user, client-id> pairs and the default user."""
USER_CONFIGS: dict[str, ConfigKey] = {
    **{name: ConfigKey(name, ValueType.STRING, "") for name in SCRAM_MECHANISMS},
    **CLIENT_CONFIGS,
}
"""`DynamicConfig.User`: a named user (its SCRAM credentials live in the same znode)."""


def is_client_or_user_quota_config(name: str) -> bool:
    """Kafka's `QuotaConfigs.isClientOrUserConfig`."""
    return name in CLIENT_CONFIGS


def validate_quota_config(config: Mapping[str, str], user_only: bool) -> None:
    """`DynamicConfig.User.validate` (`user_only`: a named user, no client) or `DynamicConfig.Client.validate`
    for the whole new config of an entity.

    Raises InvalidArgumentError for a name the entity does not take (Kafka's `require`), and
    InvalidConfigurationError (ConfigException's text) for a value that does not parse.
    """
    definitions = USER_CONFIGS if user_only else CLIENT_CONFIGS
    unknown = [name for name in properties_order(config) if name not in definitions]
    if unknown:
        # Kafka: props.keySet.asScala.map(...).filter(...), a Scala 2.13 mutable.HashSet
        names = scala_mutable_hash_set(unknown, java_string_hash)
        raise InvalidArgumentError(f"requirement failed: Unknown Dynamic Configuration: {names}.")
    for key in definitions.values():
        if key.name in config:
            parse_value(key.name, key.type, config[key.name])


def refuse_scram_credentials(add: Mapping[str, str]) -> None:
    """Kafka hashes a SCRAM password into a salted credential before it stores it
    (`preProcessScramCredentials`); kafkaops does not, and its brokers have no SASL listener to use one.
    Credentials already in a user's znode are kept as they are."""
    scram = [name for name in SCRAM_MECHANISMS if name in add]
    if scram:
        raise InvalidArgumentError(
            f"kafkaops configs does not manage SCRAM credentials ({', '.join(scram)}): only quota configs "
            "may be set for users"
        )


# --- the Admin API: DescribeClientQuotas / AlterClientQuotas (Kafka's ZkAdminManager) ---------------------

USER = "user"
CLIENT_ID = "client-id"
IP = "ip"
"""`ClientQuotaEntity`'s entity types, as the Admin API names them."""

MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY = 0, 1, 2
"""DescribeClientQuotas' `match_type`: a name, the default entity, or any entity of the type."""

QuotaEntity = dict[str, str | None]
"""A `ClientQuotaEntity`: entity type → name, None for the default entity (`<default>`)."""


@dataclasses.dataclass(frozen=True)
class FilterComponent:
    """`ClientQuotaFilterComponent`: `match` is the name for MATCH_EXACT, else unused."""

    entity_type: str
    match_type: int
    match: str | None = None


@dataclasses.dataclass(frozen=True)
class QuotaAlteration:
    """`ClientQuotaAlteration`: ops are (key, value), value None to remove the key."""

    entity: QuotaEntity
    ops: tuple[tuple[str, float | None], ...]


def sanitize_quota_entity_name(name: str | None) -> str:
    """ZkAdminManager.sanitizeEntityName: None (the default entity) is `<default>`."""
    return DEFAULT_ENTITY_NAME if name is None else sanitize_entity_name(name)


def desanitize_quota_entity_name(name: str) -> str | None:
    return None if name == DEFAULT_ENTITY_NAME else desanitize_entity_name(name)


def _quota_values(config: Mapping[str, str]) -> dict[str, float]:
    values = {}
    for key in properties_order(config):
        if is_client_or_user_quota_config(key):
            try:
                values[key] = float(config[key])
            except ValueError:
                raise UnknownServerError(
                    f"Unexpected client quota configuration value: {key} -> {config[key]}"
                ) from None
    return values


def parse_filter(components: Sequence[FilterComponent]) -> tuple[FilterComponent | None, FilterComponent | None]:
    """The user and client-id components of a filter (Kafka's checks: one of each type at most)."""
    user: FilterComponent | None = None
    client: FilterComponent | None = None
    for component in components:
        if component.entity_type == USER:
            if user is not None:
                raise InvalidRequestError("Duplicate user filter component entity type")
            user = component
        elif component.entity_type == CLIENT_ID:
            if client is not None:
                raise InvalidRequestError("Duplicate client filter component entity type")
            client = component
        elif component.entity_type == "":
            raise InvalidRequestError("Unexpected empty filter component entity type")
        elif component.entity_type == IP:
            raise UnsupportedVersionError("IP quotas are not supported by kafkaops")
        else:
            raise UnsupportedVersionError(f"Custom entity type '{component.entity_type}' not supported")
        if component.match_type not in (MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY):
            raise InvalidRequestError(f"Unexpected match type: {component.match_type}")
    return user, client


def _name_filter(component: FilterComponent | None) -> tuple[bool, str | None]:
    """(whether it names one entity, its name: None for the default entity)."""
    if component is None or component.match_type == MATCH_ANY:
        return False, None
    return True, component.match if component.match_type == MATCH_EXACT else None


def _matches(component: FilterComponent | None, present: bool, name: str | None, strict: bool) -> bool:
    if component is None:
        return not present or not strict
    exact, wanted = _name_filter(component)
    return present and (not exact or name == wanted)


def describe_client_quotas(
    zk: KafkaZkClient, components: Sequence[FilterComponent], strict: bool
) -> list[tuple[QuotaEntity, dict[str, float]]]:
    """`ZkAdminManager.describeClientQuotas` for users and client ids: every entity the filter matches
    that has a quota, with its quota values. Raises InvalidRequestError / UnsupportedVersionError for a
    bad filter."""
    user_component, client_component = parse_filter(components)
    exact_user, user = _name_filter(user_component)
    exact_client, client_id = _name_filter(client_component)
    exclude_user = strict and user_component is None
    exclude_client = strict and client_component is None
    found: list[tuple[tuple[bool, str | None, bool, str | None], dict[str, str]]] = []
    if exact_user and exclude_client:
        config, _ = zk.get_entity_config(ConfigType.USER, sanitize_quota_entity_name(user))
        found.append(((True, user, False, None), config))
    elif not exclude_user and not exact_client:
        users = zk.get_all_entities(ConfigType.USER)
        for name, config in zk.get_entity_configs(ConfigType.USER, users).items():
            found.append(((True, desanitize_quota_entity_name(name), False, None), config))
    if exclude_user and exact_client:
        config, _ = zk.get_entity_config(ConfigType.CLIENT, sanitize_quota_entity_name(client_id))
        found.append(((False, None, True, client_id), config))
    elif not exact_user and not exclude_client:
        clients = zk.get_all_entities(ConfigType.CLIENT)
        for name, config in zk.get_entity_configs(ConfigType.CLIENT, clients).items():
            found.append(((False, None, True, desanitize_quota_entity_name(name)), config))
    if exact_user and exact_client:
        path = user_client_entity_path(sanitize_quota_entity_name(user), sanitize_quota_entity_name(client_id))
        config, _ = zk.get_entity_config(ConfigType.USER, path)
        found.append(((True, user, True, client_id), config))
    elif not exclude_user and not exclude_client:
        for sanitized_user in zk.get_all_entities(ConfigType.USER):
            pairs = [user_client_entity_path(sanitized_user, c) for c in zk.get_user_client_entities(sanitized_user)]
            for path, config in zk.get_entity_configs(ConfigType.USER, pairs).items():
                key = (True, desanitize_quota_entity_name(sanitized_user), True)
                found.append(((*key, desanitize_quota_entity_name(path.rsplit("/", 1)[1])), config))
    described = []
    for (has_user, u, has_client, c), config in found:
        values = _quota_values(config)
        if (
            values
            and _matches(user_component, has_user, u, strict)
            and _matches(client_component, has_client, c, strict)
        ):
            entity: QuotaEntity = {}
            if has_user:
                entity[USER] = u
            if has_client:
                entity[CLIENT_ID] = c
            described.append((entity, values))
    return described


def _alter_entity_path(entity: QuotaEntity) -> tuple[str, str, dict[str, ConfigKey]]:
    """(config type, path under it, the keys it takes) of an AlterClientQuotas entity."""
    if not entity:
        raise InvalidRequestError("Invalid empty client quota entity")
    for entity_type in entity:
        if entity_type not in (USER, CLIENT_ID, IP):
            raise InvalidRequestError(f"Unhandled client quota entity type: {entity_type}")
    if IP in entity:
        if USER in entity or CLIENT_ID in entity:
            raise InvalidRequestError(
                "Invalid quota entity combination, IP entity should not be used with user/client ID entity."
            )
        raise InvalidRequestError("IP quotas are not supported by kafkaops")
    if USER in entity and CLIENT_ID in entity:
        path = user_client_entity_path(
            sanitize_quota_entity_name(entity[USER]), sanitize_quota_entity_name(entity[CLIENT_ID])
        )
        return ConfigType.USER, path, USER_CONFIGS
    if USER in entity:
        return ConfigType.USER, sanitize_quota_entity_name(entity[USER]), USER_CONFIGS
    return ConfigType.CLIENT, sanitize_quota_entity_name(entity[CLIENT_ID]), CLIENT_CONFIGS


def apply_quota_ops(
    config: Mapping[str, str], ops: Sequence[tuple[str, float | None]], keys: Mapping[str, ConfigKey]
) -> dict[str, str]:
    """The config after AlterClientQuotas' ops (Kafka: a LONG takes a whole number, within 1e-6)."""
    result = dict(config)
    for key, value in ops:
        if value is None:
            result.pop(key, None)
            continue
        definition = keys.get(key)
        if definition is None:
            raise InvalidRequestError(f"Invalid configuration key {key}")
        if definition.type is ValueType.DOUBLE:
            result[key] = java_double_string(value)
        elif definition.type in (ValueType.LONG, ValueType.INT):
            whole = int(value + 1e-6)
            if abs(whole - value) > 1e-6:
                raise InvalidRequestError(f"Configuration {key} must be a {definition.type.value} value")
            result[key] = str(whole)
        else:
            raise UnknownServerError(f"Unexpected config type {definition.type.value}")
    return result


def alter_client_quotas(
    zk: KafkaZkClient, alterations: Sequence[QuotaAlteration], validate_only: bool
) -> list[tuple[QuotaEntity, KafkaOpsError | None]]:
    """`ZkAdminManager.alterClientQuotas`: each entity's ops applied to its config znode and written with
    its change notification (as `kafkaops configs --alter` writes them); per entity None or the error."""
    results: list[tuple[QuotaEntity, KafkaOpsError | None]] = []
    for alteration in alterations:
        try:
            config_type, path, keys = _alter_entity_path(alteration.entity)
            current, version = zk.get_entity_config(config_type, path)
            config = apply_quota_ops(current, alteration.ops, keys)
            user_only = config_type == ConfigType.USER and "/" not in path and path != DEFAULT_ENTITY_NAME
            validate_quota_config(config, user_only)
            if not validate_only:
                zk.set_entity_config_and_notify(config_type, path, config, version)
        except KafkaOpsError as error:
            results.append((alteration.entity, error))
        else:
            results.append((alteration.entity, None))
    return results


# --- wire shapes: DescribeClientQuotas / AlterClientQuotas bodies (snake_case dicts of the codec) --------


def _entity_order(entity: QuotaEntity) -> list[str]:
    # Kafka's ClientQuotaEntity holds a java.util.HashMap: its entity types come in that order
    return hash_map_order(entity)


def entity_to_wire(entity: QuotaEntity) -> list[dict[str, str | None]]:
    return [{"entity_type": t, "entity_name": entity[t]} for t in _entity_order(entity)]


def entity_from_wire(data: Sequence[Mapping[str, Any]]) -> QuotaEntity:
    return {d["entity_type"]: d["entity_name"] for d in data}


def describe_request_to_wire(components: Sequence[FilterComponent], strict: bool) -> dict[str, Any]:
    return {
        "components": [
            {"entity_type": c.entity_type, "match_type": c.match_type, "match": c.match} for c in components
        ],
        "strict": strict,
    }


def describe_request_from_wire(body: Mapping[str, Any]) -> tuple[list[FilterComponent], bool]:
    components = [FilterComponent(c["entity_type"], c["match_type"], c["match"]) for c in body["components"]]
    return components, bool(body["strict"])


def describe_response_to_wire(
    entries: Sequence[tuple[QuotaEntity, Mapping[str, float]]] | None,
    error: KafkaOpsError | None = None,
) -> dict[str, Any]:
    """The response body; with an error, no entries (Kafka's `getErrorResponse`)."""
    code, message = error_code_and_message(error)
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "error_message": message,
        "entries": None
        if error is not None or entries is None
        else [
            {
                "entity": entity_to_wire(entity),
                "values": [{"key": k, "value": v} for k, v in values.items()],
            }
            for entity, values in entries
        ],
    }


def describe_response_from_wire(body: Mapping[str, Any]) -> list[tuple[QuotaEntity, dict[str, float]]]:
    """The entries of a response; raises the response's error."""
    if body["error_code"] != NONE:
        raise from_code(body["error_code"], body["error_message"])
    return [(entity_from_wire(e["entity"]), {v["key"]: v["value"] for v in e["values"]}) for e in body["entries"] or []]


def alter_request_to_wire(alterations: Sequence[QuotaAlteration], validate_only: bool) -> dict[str, Any]:
    return {
        "entries": [
            {
                "entity": entity_to_wire(a.entity),
                "ops": [
                    {"key": key, "value": 0.0 if value is None else value, "remove": value is None}
                    for key, value in a.ops
                ],
            }
            for a in alterations
        ],
        "validate_only": validate_only,
    }


def alter_request_from_wire(body: Mapping[str, Any]) -> tuple[list[QuotaAlteration], bool]:
    alterations = [
        QuotaAlteration(
            entity_from_wire(e["entity"]),
            tuple((op["key"], None if op["remove"] else float(op["value"])) for op in e["ops"]),
        )
        for e in body["entries"]
    ]
    return alterations, bool(body["validate_only"])


def alter_response_to_wire(results: Sequence[tuple[QuotaEntity, KafkaOpsError | None]]) -> dict[str, Any]:
    entries = []
    for entity, error in results:
        code, message = error_code_and_message(error)
        entries.append({"error_code": code, "error_message": message, "entity": entity_to_wire(entity)})
    return {"throttle_time_ms": 0, "entries": entries}


def alter_response_from_wire(body: Mapping[str, Any]) -> list[tuple[QuotaEntity, KafkaOpsError | None]]:
    return [
        (
            entity_from_wire(e["entity"]),
            None if e["error_code"] == NONE else from_code(e["error_code"], e["error_message"]),
        )
        for e in body["entries"]
    ]


def error_code_and_message(error: KafkaOpsError | None) -> tuple[int, str | None]:
    """Kafka's `ApiError.fromThrowable`: a Kafka error's code and message; anything else is
    UNKNOWN_SERVER_ERROR with its message."""
    if error is None:
        return NONE, None
    if isinstance(error, BrokerError):
        return error.code, error.message
    return UnknownServerError.code, str(error)

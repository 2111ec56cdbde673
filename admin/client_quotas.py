"""Client quotas (KIP-13, KIP-55, KIP-124): their config names, validation and entity rules.

Quotas live in the config znodes of users and clients (Kafka's `ConfigType.User` / `ConfigType.Client`):
`/config/users/<user>`, `/config/clients/<client-id>`, `/config/users/<user>/clients/<client-id>`, with
`<default>` for either name, user and client ids sanitized as Kafka's `Sanitizer` does. Which znode holds
which keys is Kafka's `AdminZkClient.changeUserOrUserClientIdConfig` / `changeClientIdConfig`: a user
alone takes the quota keys and the SCRAM credential keys (`DynamicConfig.User`), every other quota
entity the quota keys only (`DynamicConfig.Client`). Pure functions: no ZooKeeper here.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafkaops.cluster.common.config_types import ConfigKey, ConfigType, parse_value
from kafkaops.cluster.common.errors import InvalidArgumentError
from kafkaops.cluster.common.jvm_text import LONG_MAX, java_string_hash, properties_order, scala_mutable_hash_set

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")

# Kafka's QuotaConfigs.buildUserClientQuotaConfigDef, in its definition order (ConfigDef.parse reports
# the first bad value in this order)
_QUOTA_KEYS = (
    ConfigKey(PRODUCER_BYTE_RATE, ConfigType.LONG, str(LONG_MAX)),
    ConfigKey(CONSUMER_BYTE_RATE, ConfigType.LONG, str(LONG_MAX)),
    ConfigKey(REQUEST_PERCENTAGE, ConfigType.DOUBLE, str(float(2**31 - 1))),
    ConfigKey(CONTROLLER_MUTATION_RATE, ConfigType.DOUBLE, str(float(2**31 - 1))),
)
CLIENT_CONFIGS: dict[str, ConfigKey] = {key.name: key for key in _QUOTA_KEYS}
"""`DynamicConfig.Client`: clients, <user, client-id> pairs and the default user."""
USER_CONFIGS: dict[str, ConfigKey] = {
    **{name: ConfigKey(name, ConfigType.STRING, "") for name in SCRAM_MECHANISMS},
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
    scram = [name for name in SCRAM_MECHANISMS if name in config]
    if scram:
        # Kafka hashes the password into a salted SCRAM credential first (`preProcessScramCredentials`);
        # kafkaops' brokers have no SASL listener that would use it
        raise InvalidArgumentError(
            f"kafkaops configs does not manage SCRAM credentials ({', '.join(scram)}): only quota configs "
            "may be set for users"
        )

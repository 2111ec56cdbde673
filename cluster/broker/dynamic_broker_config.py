"""A broker's configuration in layers, some of them changing while it runs (Kafka's `DynamicBrokerConfig`).

Precedence, highest first (Kafka's order):

1. DYNAMIC_BROKER_CONFIG: `/config/brokers/<id>`
2. DYNAMIC_DEFAULT_BROKER_CONFIG: `/config/brokers/<default>`
3. STATIC_BROKER_CONFIG: the broker's config file as given
4. DEFAULT_CONFIG: Kafka's defaults (`KafkaConfig`, a null default being no value)

The dynamic layers are replaced by the `DynamicConfigManager` on each change notification; the parts of
the broker that honour a dynamic config register as reconfigurables and are told the new values (on the
thread that read them: each one hops onto its own thread if it must). Values are strings, as stored.

Topic configs fall back on broker configs of other names (`LogConfig.TopicConfigSynonyms`), and some
broker configs have several spellings (`log.retention.ms` / `.minutes` / `.hours`): `log_defaults` gives
the topic-level defaults the layered broker configs make (Kafka's `copyKafkaConfigToLog`).
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkaops.admin.config_def import (
    BROKER_CONFIGS_UPDATABLE_WHILE_RUNNING,
    BROKER_DYNAMIC_CONFIGS,
    TOPIC_CONFIGS,
    TOPIC_TO_BROKER_CONFIG,
)
from kafkaops.cluster.broker.config import BROKER_CONFIGS, BrokerConfig
from kafkaops.cluster.common.config_types import ConfigKey
from kafkaops.cluster.zk.values import EndPoint

Reconfigurable = Callable[["DynamicBrokerConfig"], None]


class ConfigSource(enum.IntEnum):
    """Kafka's `DescribeConfigsResponse.ConfigSource`; the value is the wire byte."""

    UNKNOWN = 0
    TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6


@dataclass(frozen=True, slots=True)
class ConfigSynonym:
    name: str
    value: str | None
    source: ConfigSource


def broker_config_key(name: str) -> ConfigKey | None:
    """The definition of a broker config name (static or dynamic); None for a name Kafka does not know."""
    return BROKER_CONFIGS.get(name) or BROKER_DYNAMIC_CONFIGS.get(name)


def broker_config_synonyms(name: str) -> list[str]:
    """Kafka's `DynamicBrokerConfig.brokerConfigSynonyms`: the spellings of one broker config, in
    precedence order."""
    match name:
        case "log.roll.ms" | "log.roll.hours":
            return ["log.roll.ms", "log.roll.hours"]
        case "log.roll.jitter.ms" | "log.roll.jitter.hours":
            return ["log.roll.jitter.ms", "log.roll.jitter.hours"]
        case "log.flush.interval.ms":
            return ["log.flush.interval.ms", "log.flush.scheduler.interval.ms"]
        case "log.retention.ms" | "log.retention.minutes" | "log.retention.hours":
            return ["log.retention.ms", "log.retention.minutes", "log.retention.hours"]
        case _:
            return [name]


_STATIC_DEFAULTS: dict[str, str] = {
    **{
        name: key.default
        for name, key in BROKER_DYNAMIC_CONFIGS.items()
        if name not in BROKER_CONFIGS_UPDATABLE_WHILE_RUNNING and name not in BROKER_CONFIGS
    },
    **{name: key.default for name, key in BROKER_CONFIGS.items() if not key.optional},
}
"""Kafka's `staticDefaultConfigs`: every broker config with a non-null default (the replication quotas are
not KafkaConfig's and have none)."""

_TIME_SYNONYMS = {
    # topic config -> [(broker config, factor to milliseconds)], first present wins (KafkaConfig's getters)
    "segment.ms": [("log.roll.ms", 1), ("log.roll.hours", 3_600_000)],
    "segment.jitter.ms": [("log.roll.jitter.ms", 1), ("log.roll.jitter.hours", 3_600_000)],
    "retention.ms": [("log.retention.ms", 1), ("log.retention.minutes", 60_000), ("log.retention.hours", 3_600_000)],
    "flush.ms": [("log.flush.interval.ms", 1), ("log.flush.scheduler.interval.ms", 1)],
}


class DynamicBrokerConfig:
    """One broker's layered configs. Thread-safe: the DynamicConfigManager writes from kazoo's thread, the
    request handlers read from the executor."""

    def __init__(self, config: BrokerConfig) -> None:
        self.broker_id = config.broker_id
        self.static_broker_configs: dict[str, str] = static_broker_configs(config)
        self.static_default_configs: dict[str, str] = dict(_STATIC_DEFAULTS)
        self._lock = threading.Lock()
        self._dynamic_broker: dict[str, str] = {}
        self._dynamic_default: dict[str, str] = {}
        self._reconfigurables: list[Reconfigurable] = []
        self._memo: dict[tuple[str, ...], Any] = {}
        """Synonyms and log defaults computed since the last update (a DescribeConfigs of a thousand topics
        asks for the same ones a thousand times); emptied by `update`."""

    @property
    def dynamic_broker_configs(self) -> dict[str, str]:
        with self._lock:
            return dict(self._dynamic_broker)

    @property
    def dynamic_default_configs(self) -> dict[str, str]:
        with self._lock:
            return dict(self._dynamic_default)

    def add_reconfigurable(self, reconfigurable: Reconfigurable) -> None:
        """`reconfigurable(self)` is called after each update (Kafka's `addReconfigurable`)."""
        self._reconfigurables.append(reconfigurable)

    def update(self, dynamic_default: Mapping[str, str], dynamic_broker: Mapping[str, str]) -> None:
        """New contents of `/config/brokers/<default>` and `/config/brokers/<id>`; tells the reconfigurables."""
        with self._lock:
            self._dynamic_default = dict(dynamic_default)
            self._dynamic_broker = dict(dynamic_broker)
            self._memo = {}
        for reconfigurable in self._reconfigurables:
            reconfigurable(self)

    def layers(self) -> list[tuple[ConfigSource, dict[str, str]]]:
        """The four layers, highest precedence first."""
        with self._lock:
            return [
                (ConfigSource.DYNAMIC_BROKER_CONFIG, dict(self._dynamic_broker)),
                (ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, dict(self._dynamic_default)),
                (ConfigSource.STATIC_BROKER_CONFIG, self.static_broker_configs),
                (ConfigSource.DEFAULT_CONFIG, self.static_default_configs),
            ]

    def current(self) -> dict[str, str]:
        """Every broker config that has a value, each from its highest layer."""
        merged: dict[str, str] = {}
        for _, layer in reversed(self.layers()):
            merged.update(layer)
        return merged

    def dynamic_overrides(self) -> dict[str, str]:
        """`<default>` overridden by `<id>`: the dynamic part only."""
        with self._lock:
            return {**self._dynamic_default, **self._dynamic_broker}

    def synonyms(self, name: str, synonyms: list[str] | None = None) -> list[ConfigSynonym]:
        """Kafka's `ConfigHelper.configSynonyms`: each spelling's value in each layer, layer by layer, from
        the first entry that is `name` itself (a shorter spelling set only in a lower layer is dropped, as
        Kafka drops it)."""
        names = broker_config_synonyms(name) if synonyms is None else synonyms
        memo, key = self._memo, ("synonyms", name, *names)
        cached = memo.get(key)
        if cached is not None:
            return list(cached)
        found = [
            ConfigSynonym(synonym, layer[synonym], source)
            for source, layer in self.layers()
            for synonym in names
            if synonym in layer
        ]
        while found and found[0].name != name:
            found.pop(0)
        memo[key] = tuple(found)
        return found

    def log_defaults(self) -> dict[str, str]:
        """Every topic config's value when the topic does not override it (Kafka's `copyKafkaConfigToLog`
        over the layered broker configs)."""
        memo = self._memo
        cached = memo.get(("log_defaults",))
        if cached is not None:
            return dict(cached)
        current = self.current()
        defaults: dict[str, str] = {}
        for topic_name, key in TOPIC_CONFIGS.items():
            timed = _TIME_SYNONYMS.get(topic_name)
            if timed is not None:
                millis = next((int(current[b]) * f for b, f in timed if _is_int(current.get(b))), int(key.default))
                value = str(-1 if topic_name == "retention.ms" and millis < 0 else millis)
            else:
                broker_name = TOPIC_TO_BROKER_CONFIG.get(topic_name)
                value = current.get(broker_name, key.default) if broker_name is not None else key.default
            defaults[topic_name] = value
        memo[("log_defaults",)] = dict(defaults)
        return defaults


def static_broker_configs(config: BrokerConfig) -> dict[str, str]:
    """The properties the broker's config file sets (Kafka's `originals`): every one whose value is not
    Kafka's default, as text (a property set to its default value counts as a default here)."""
    found = {}
    for name, key in BROKER_CONFIGS.items():
        value = config.get(name)
        if value is None:
            continue
        text = _text(value)
        if key.optional or text != _text(key.parse(key.default)):
            found[name] = text
    return found


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return ",".join(f"{k}:{v}" for k, v in value.items())
    if isinstance(value, tuple | list):
        return ",".join(f"{v.listener}://{v.host}:{v.port}" if isinstance(v, EndPoint) else str(v) for v in value)
    return str(value)


def _is_int(value: str | None) -> bool:
    return value is not None and value.strip().lstrip("+-").isdigit()

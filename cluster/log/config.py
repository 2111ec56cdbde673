"""The topic configs a partition log obeys (Kafka's `LogConfig`, the part this log implements).

The broker passes a plain mapping of topic-level overrides (the `/config/topics/<topic>` JSON's
`config` object, values as strings, or ints) over defaults it derives from its own `log.*` settings;
keys this log does not use (`min.insync.replicas`, `message.timestamp.type`, ...) belong to other rooms
and are ignored here. Values are parsed and checked as Kafka's `ConfigDef` does, with its messages.

Not implemented (Kafka's defaults behave as if absent): `segment.jitter.ms` (0), `flush.messages` /
`flush.ms` (never: durability comes from replication, and from the caller's scheduled flushes),
`file.delete.delay.ms` (segments are deleted at once), `preallocate`. The compaction settings
(`delete.retention.ms`, `min.compaction.lag.ms`, `max.compaction.lag.ms`, `min.cleanable.dirty.ratio`) are
read by the log cleaner (log_cleaner.py).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass

from kafkaops.cluster.common.config_types import ConfigType, between, parse_value
from kafkaops.cluster.common.errors import InvalidConfigurationError

_INT_MAX = 2**31 - 1
_LONG_MAX = 2**63 - 1
_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")
_POLICIES = ("compact", "delete")


@dataclass(frozen=True, slots=True)
class LogConfig:
    """One log's settings; the defaults are Kafka 2.8's topic defaults."""

    segment_bytes: int = 1024 * 1024 * 1024
    segment_ms: int = 7 * 24 * 3600 * 1000
    segment_index_bytes: int = 10 * 1024 * 1024
    retention_bytes: int = -1
    retention_ms: int = 7 * 24 * 3600 * 1000
    index_interval_bytes: int = 4096
    max_message_bytes: int = 1024 * 1024 + 12
    cleanup_policy: tuple[str, ...] = ("delete",)
    delete_retention_ms: int = 24 * 3600 * 1000
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = _LONG_MAX
    min_cleanable_dirty_ratio: float = 0.5

    @property
    def delete_enabled(self) -> bool:
        """Whether retention deletes segments (Kafka's `LogConfig.delete`)."""
        return "delete" in self.cleanup_policy

    @property
    def compact(self) -> bool:
        """Whether the log cleaner compacts this log (Kafka's `LogConfig.compact`)."""
        return "compact" in self.cleanup_policy

    @classmethod
    def from_mapping(cls, overrides: Mapping[str, object], defaults: LogConfig | None = None) -> LogConfig:
        """`defaults` with the topic's overrides applied; keys of other rooms are ignored.

        Raises InvalidConfigurationError with Kafka's text for a value that does not parse or is out of
        range (`Invalid value 10 for configuration segment.bytes: Value must be at least 14`).
        """
        changes: dict[str, object] = {}
        for name, value in overrides.items():
            spec = _SPECS.get(name)
            if spec is not None:
                field, bits, minimum = spec
                changes[field] = _parse_int(name, value, bits, minimum)
            elif name == "cleanup.policy":
                changes["cleanup_policy"] = _parse_policy(value)
            elif name == "min.cleanable.dirty.ratio":
                changes["min_cleanable_dirty_ratio"] = _parse_ratio(name, value)
        return dataclasses.replace(defaults if defaults is not None else cls(), **changes)  # type: ignore[arg-type]


# Kafka property → (field, INT or LONG width, `atLeast` bound or None), as in Kafka 2.8's LogConfig.
_SPECS: dict[str, tuple[str, int, int | None]] = {
    "segment.bytes": ("segment_bytes", 32, 14),
    "segment.ms": ("segment_ms", 64, 1),
    "segment.index.bytes": ("segment_index_bytes", 32, 0),
    "retention.bytes": ("retention_bytes", 64, None),
    "retention.ms": ("retention_ms", 64, -1),
    "index.interval.bytes": ("index_interval_bytes", 32, 0),
    "max.message.bytes": ("max_message_bytes", 32, 0),
    "delete.retention.ms": ("delete_retention_ms", 64, 0),
    "min.compaction.lag.ms": ("min_compaction_lag_ms", 64, 0),
    "max.compaction.lag.ms": ("max_compaction_lag_ms", 64, 1),
}


def _error(name: str, value: object, reason: str) -> InvalidConfigurationError:
    return InvalidConfigurationError(f"Invalid value {value} for configuration {name}: {reason}")


def _parse_int(name: str, value: object, bits: int, minimum: int | None) -> int:
    """`ConfigDef.parseType` for INT/LONG (Java's `parseInt`: digits with an optional sign, nothing else),
    then `Range.atLeast`."""
    kind = "INT" if bits == 32 else "LONG"
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and _JAVA_INTEGER.fullmatch(value.strip()):
        number = int(value.strip())
    else:
        raise _error(name, value, f"Not a number of type {kind}")
    limit = _INT_MAX if bits == 32 else _LONG_MAX
    if not -limit - 1 <= number <= limit:
        raise _error(name, value, f"Not a number of type {kind}")
    if minimum is not None and number < minimum:
        raise _error(name, value, f"Value must be at least {minimum}")
    return number


def _parse_ratio(name: str, value: object) -> float:
    """A DOUBLE checked against `Range.between(0, 1)`."""
    number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if number is None:
        number = parse_value(name, ConfigType.DOUBLE, str(value))
    between(0, 1)(name, number)
    return number


def _parse_policy(value: object) -> tuple[str, ...]:
    """A LIST (`compact,delete`) checked against `ValidList.in("compact", "delete")`."""
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    policies = tuple(str(item).strip() for item in items if str(item).strip())
    for policy in policies:
        if policy not in _POLICIES:
            raise _error("cleanup.policy", policy, f"String must be one of: {', '.join(_POLICIES)}")
    return policies

"""Kafka's `ConfigDef` parsing and validators, shared by the broker's config and `admin`'s configs.

Values are parsed the way Kafka's `ConfigDef.parseType` parses them and errors carry
`ConfigException`'s text, `Invalid value <v> for configuration <name>: <reason>`, so an operator
sees what Kafka would say. This is the generic half of `admin/config_def.py`: it lives on the floor
because the broker needs it too and `cluster` must not import `admin` (DESIGN.md).
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Callable
from typing import Any

from kafkaops.cluster.common.errors import InvalidConfigurationError
from kafkaops.cluster.common.jvm_text import INT_MAX, LONG_MAX, SHORT_MAX, java_double_string


class ConfigType(enum.Enum):
    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    SHORT = "SHORT"
    INT = "INT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"


Validator = Callable[[str, Any], None]
"""`ConfigDef.Validator.ensureValid(name, parsedValue)`: raises InvalidConfigurationError or returns."""


def config_error(name: str, value: Any, reason: str) -> InvalidConfigurationError:
    """Kafka's `ConfigException(name, value, message)` text; a parsed DOUBLE prints as Java prints it."""
    shown = java_double_string(value) if isinstance(value, float) else value
    return InvalidConfigurationError(f"Invalid value {shown} for configuration {name}: {reason}")


_INTEGER_BOUNDS = {ConfigType.SHORT: SHORT_MAX, ConfigType.INT: INT_MAX, ConfigType.LONG: LONG_MAX}


def parse_value(name: str, kind: ConfigType, value: str) -> Any:
    """`ConfigDef.parseType` for a string value."""
    trimmed = value.strip()
    if kind is ConfigType.BOOLEAN:
        if trimmed.lower() in ("true", "false"):
            return trimmed.lower() == "true"
        raise config_error(name, value, "Expected value to be either true or false")
    if kind is ConfigType.STRING:
        return trimmed
    if kind in _INTEGER_BOUNDS:
        bound = _INTEGER_BOUNDS[kind]
        if re.fullmatch(r"[+-]?[0-9]+", trimmed) and -bound - 1 <= int(trimmed) <= bound:
            return int(trimmed)
        raise config_error(name, value, f"Not a number of type {kind.value}")
    if kind is ConfigType.DOUBLE:
        # Java's Double.parseDouble: `1.`, `.5`, `1e5`, hex `0x1p-1`, an f/d suffix, NaN, Infinity
        number = trimmed[:-1] if trimmed[-1:] in ("d", "D", "f", "F") and "x" not in trimmed.lower() else trimmed
        if re.fullmatch(r"[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)", number):
            return float(number.replace("Infinity", "inf"))
        hexadecimal = re.fullmatch(
            r"([+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?", trimmed
        )
        if hexadecimal:
            return float.fromhex(hexadecimal.group(1))
        raise config_error(name, value, "Not a number of type DOUBLE")
    # LIST: comma separated, trimmed; empty string is the empty list
    return [] if trimmed == "" else [item.strip() for item in trimmed.split(",")]


def _number(n: float) -> str:
    return str(int(n)) if float(n).is_integer() else str(n)


def at_least(minimum: float) -> Validator:
    def check(name: str, value: Any) -> None:
        if value < minimum:
            raise config_error(name, value, f"Value must be at least {_number(minimum)}")

    return check


def between(minimum: float, maximum: float) -> Validator:
    def check(name: str, value: Any) -> None:
        if value < minimum:
            raise config_error(name, value, f"Value must be at least {_number(minimum)}")
        if value > maximum:
            raise config_error(name, value, f"Value must be no more than {_number(maximum)}")

    return check


def one_of(*allowed: str) -> Validator:
    def check(name: str, value: Any) -> None:
        if value not in allowed:
            raise config_error(name, value, f"String must be one of: {', '.join(allowed)}")

    return check


def each_one_of(*allowed: str) -> Validator:
    """`ValidList.in(...)`: each element must be allowed."""
    element = one_of(*allowed)

    def check(name: str, value: Any) -> None:
        for item in value:
            element(name, item)

    return check


# ApiVersion.apply accepts the short versions and every internal version of 0.8.0 .. 2.8
_API_VERSIONS = {
    "0.8.0": [],
    "0.8.1": [],
    "0.8.2": [],
    "0.9.0": [],
    "0.10.0": ["IV0", "IV1"],
    "0.10.1": ["IV0", "IV1", "IV2"],
    "0.10.2": ["IV0"],
    "0.11.0": ["IV0", "IV1", "IV2"],
    "1.0": ["IV0"],
    "1.1": ["IV0"],
    "2.0": ["IV0", "IV1"],
    "2.1": ["IV0", "IV1", "IV2"],
    "2.2": ["IV0", "IV1"],
    "2.3": ["IV0", "IV1"],
    "2.4": ["IV0", "IV1"],
    "2.5": ["IV0"],
    "2.6": ["IV0"],
    "2.7": ["IV0", "IV1", "IV2"],
    "2.8": ["IV0", "IV1"],
}
KNOWN_API_VERSIONS = frozenset(
    [short for short in _API_VERSIONS] + [f"{short}-{iv}" for short, ivs in _API_VERSIONS.items() for iv in ivs]
)
LATEST_API_VERSION = "2.8-IV1"


def api_version(name: str, value: Any) -> None:
    """`ApiVersionValidator`: `0.x.y[.z]` keeps three segments, later versions two (`2.8.1` → `2.8`)."""
    text = str(value)
    segments = text.split(".")
    key = ".".join(segments[:3] if text.startswith("0.") else segments[:2])
    if key not in KNOWN_API_VERSIONS:
        raise config_error(name, text, f"Version `{text}` is not a valid version")


@dataclasses.dataclass(frozen=True)
class ConfigKey:
    """One `ConfigDef.define(name, type, default, validator)`.

    `optional` marks Kafka's `null` default: the config has no value unless one is given (then
    `default` is unused). It is a flag rather than `default=None` so that code reading `default`
    of an ordinary key keeps a plain `str`.
    """

    name: str
    type: ConfigType
    default: str
    validator: Validator | None = None
    optional: bool = False

    @classmethod
    def null_default(cls, name: str, kind: ConfigType, validator: Validator | None = None) -> ConfigKey:
        return cls(name, kind, "", validator, optional=True)

    def parse(self, value: str) -> Any:
        """The parsed and validated value; raises InvalidConfigurationError with Kafka's text."""
        parsed = parse_value(self.name, self.type, value)
        if self.validator is not None:
            self.validator(self.name, parsed)
        return parsed

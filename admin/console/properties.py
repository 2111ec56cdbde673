"""The console tools' `--property key=value` settings, read as Kafka's tools read them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def parse_key_value_args(args: Sequence[str]) -> dict[str, str]:
    """Kafka's `CommandLineUtils.parseKeyValueArgs`: `key=value` (split at the first '='), a missing value
    is the empty string."""
    props: dict[str, str] = {}
    for arg in args:
        if not arg:
            continue
        key, _, value = arg.partition("=")
        props[key] = value
    return props


def bool_property(props: Mapping[str, str], name: str, default: bool) -> bool:
    """A true/false setting as DefaultMessageFormatter and LineMessageReader read one:
    `trim.equalsIgnoreCase("true")`, anything else is false."""
    return props[name].strip().lower() == "true" if name in props else default

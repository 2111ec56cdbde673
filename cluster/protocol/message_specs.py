"""Kafka 2.8's message JSON files (`message/*.json`, copied from apache/kafka 2.8.2's
`clients/src/main/resources/common/message/`) turned into our `Message` objects: the one source of truth
for every request and response body.

What is read from a file, as Kafka's generator reads it (`MessageSpec`, `FieldSpec`):

    apiKey, type, name, validVersions, flexibleVersions, fields, commonStructs
    per field: name, type, versions, nullableVersions, default, taggedVersions, tag, fields

Field names become snake_case (`ThrottleTimeMs` -> `throttle_time_ms`, `V0Host` -> `v0_host`). Field
types: int8/int16/int32/int64/uint16/float64/bool/string/bytes/records/uuid, `[]T` arrays of those or
of structs, and struct fields (`"type": "LeaderIdAndEpoch"` with inline `fields`, or a common struct).

Defaults follow Kafka's generated classes (0, false, "", empty bytes and arrays, the zero UUID, null
records; `"default"` overrides, `"null"` for nullable fields), with one rule of ours kept from the
hand-written schemas (schema.py): a field that exists in every version of its parent, is never tagged
and declares no default is required when encoding, so that forgetting it is an EncodeError rather
than a silent zero. `about`, `entityType`, `mapKey`, `ignorable`, `listeners` and `zeroCopy` change
nothing on the wire and are ignored.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from .schema import REQUIRED, ArrayOf, Field, Message, Struct, parse_versions
from .types import (
    BOOLEAN,
    BYTES,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UINT16,
    UUID,
    ZERO_UUID,
    Type,
)

_PRIMITIVES: Mapping[str, Type] = {
    "int8": INT8,
    "int16": INT16,
    "int32": INT32,
    "int64": INT64,
    "uint16": UINT16,
    "float64": FLOAT64,
    "bool": BOOLEAN,
    "string": STRING,
    "bytes": BYTES,
    "records": RECORDS,
    "uuid": UUID,
}

_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake_case(name: str) -> str:
    """Kafka's JSON field name in snake_case: `ThrottleTimeMs` -> `throttle_time_ms`."""
    return _SNAKE.sub("_", name).lower()


@dataclass(frozen=True)
class MessageSpec:
    """One request or response file: its API key, Kafka's name, and the compiled `Message`."""

    api_key: int
    type: str  # "request" or "response"
    name: str  # Kafka's, e.g. "CreateTopicsRequest"
    valid_versions: str
    flexible_versions: str
    message: Message


def read_json(text: str) -> dict[str, Any]:
    """A message file's JSON: Kafka's files carry `//` comment lines (the license, version notes), and
    Jackson stops after the first value (2.8.2's DescribeProducersRequest.json has a stray `]}` after it)."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
    value, _ = json.JSONDecoder().raw_decode("\n".join(lines).strip())
    if not isinstance(value, dict):
        raise ValueError("a message file holds one JSON object")
    return value


Defaults = Mapping[str, Any]
"""Defaults of ours by `"MessageName.dotted.field.path"`, overriding the file's (see schemas.py)."""


class _Builder:
    """Builds the fields of one file, resolving its common structs."""

    def __init__(self, spec: Mapping[str, Any], defaults: Defaults) -> None:
        self.name = spec["name"]
        self.common = {s["name"]: s for s in spec.get("commonStructs", [])}
        self.defaults = defaults

    def fields(self, declared: list[Mapping[str, Any]], parent: range, path: str) -> list[Field]:
        return [self.field(f, parent, path) for f in declared]

    def field(self, spec: Mapping[str, Any], parent: range, path: str) -> Field:
        name = snake_case(spec["name"])
        path = f"{path}.{name}"
        versions = parse_versions(spec["versions"])
        own = range(max(versions.start, parent.start), min(versions.stop, parent.stop))
        type_name: str = spec["type"]
        is_array = type_name.startswith("[]")
        elem_name = type_name[2:] if is_array else type_name
        elem: Type | Struct
        if elem_name in _PRIMITIVES:
            elem = _PRIMITIVES[elem_name]
        else:
            struct_spec = spec if "fields" in spec else self.common[elem_name]
            elem = Struct(*self.fields(struct_spec["fields"], own, path))
        type_: Type | Struct | ArrayOf = ArrayOf(elem) if is_array else elem
        nullable = spec.get("nullableVersions", "none")
        tagged = spec.get("taggedVersions", "none")
        default = _default(spec, type_, nullable != "none")
        if "default" not in spec and own == parent and tagged == "none":
            default = REQUIRED
        default = self.defaults.get(path, default)
        return Field(name, type_, spec["versions"], nullable, default, tagged, spec.get("tag"))


def _struct_default(struct: Struct) -> dict[str, Any]:
    return {f.name: f.default if f.default is not REQUIRED else _implicit(f.type) for f in struct.fields}


def _implicit(type_: Type | Struct | ArrayOf) -> Any:
    """Kafka's default for a field that declares none."""
    if isinstance(type_, ArrayOf):
        return []
    if isinstance(type_, Struct):
        return _struct_default(type_)
    if type_ is STRING:
        return ""
    if type_ is BYTES:
        return b""
    if type_ is RECORDS:
        return None
    if type_ is UUID:
        return ZERO_UUID
    if type_ is BOOLEAN:
        return False
    if type_ is FLOAT64:
        return 0.0
    return 0


def _default(spec: Mapping[str, Any], type_: Type | Struct | ArrayOf, nullable: bool) -> Any:
    text = spec.get("default")
    if text is None:
        return _implicit(type_)
    if text == "null":
        if not nullable:
            raise ValueError(f"{spec['name']}: default null but not nullable")
        return None
    if type_ is BOOLEAN:
        return text == "true"
    if type_ is FLOAT64:
        return float(text)
    if type_ is UUID:
        return uuid.UUID(text) if text else ZERO_UUID
    if type_ is STRING:
        return str(text)
    if isinstance(type_, Struct | ArrayOf) or type_ in (BYTES, RECORDS):
        raise ValueError(f"{spec['name']}: unsupported default {text!r}")
    return int(text, 0) if isinstance(text, str) else int(text)


def build_message(spec: Mapping[str, Any], defaults: Defaults) -> Message:
    """The `Message` of one parsed message file."""
    versions = parse_versions(spec["validVersions"])
    fields = _Builder(spec, defaults).fields(spec["fields"], versions, spec["name"])
    return Message(spec["name"], spec["validVersions"], fields, spec.get("flexibleVersions", "none"))


def _files() -> Iterator[tuple[str, str]]:
    folder = resources.files(__package__).joinpath("message")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(("Request.json", "Response.json")):
            yield entry.name, entry.read_text(encoding="utf-8")


def load_specs(defaults: Defaults) -> tuple[MessageSpec, ...]:
    """Every request and response of Kafka 2.8, compiled (schemas.py does it once per process)."""
    specs = []
    for _, text in _files():
        spec = read_json(text)
        specs.append(
            MessageSpec(
                spec["apiKey"],
                spec["type"],
                spec["name"],
                spec["validVersions"],
                spec.get("flexibleVersions", "none"),
                build_message(spec, defaults),
            )
        )
    return tuple(specs)

"""The codec against Kafka 2.8's message files and against kafka-python 3.0.12.

* The loaded schemas are what Kafka 2.8.2's JSON files say: every API key with Kafka's name, each
  request and response at its `validVersions`, flexible from its `flexibleVersions`.
* Byte for byte with kafka-python 3.0.12, whose classes are generated from Kafka's (newer) message JSON,
  for every API and every version both define up to Kafka 2.8's maximum, both directions:
  our bytes read by kafka-python and re-encoded unchanged, and kafka-python's bytes (built from its own
  objects) read by us into the value it was given and re-encoded unchanged. Values are generated from
  our schemas: nulls, empty arrays, compact strings, tagged fields, UUIDs.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkaops.cluster.protocol import messages
from kafkaops.cluster.protocol.message_specs import read_json, snake_case
from kafkaops.cluster.protocol.schema import Message, Schema
from kafkaops.cluster.protocol.schemas import REQUESTS, RESPONSES, ApiKey
from kafkaops.cluster.protocol.types import FLOAT64, INT8, INT16, INT32, INT64, UINT16, UUID, Array, Fixed, Type
from kafkaops.cluster.protocol.types import _Bytes as BytesType
from kafkaops.cluster.protocol.types import _String as StringType

_RANGES = {INT8: 7, INT16: 15, INT32: 31, INT64: 63}


def values(type_: Type) -> st.SearchStrategy[Any]:
    """Any value of a compiled type at its version: in-line fields and tagged fields."""
    if isinstance(type_, Schema):
        return st.fixed_dictionaries({f.name: values(t) for f, t in [*type_.present, *type_.tagged]})
    if isinstance(type_, Array):
        items = st.lists(values(type_.elem), max_size=2)
        return st.none() | items if type_.nullable else items
    if isinstance(type_, StringType):
        text = st.text(max_size=6)
        return st.none() | text if type_.nullable else text
    if isinstance(type_, BytesType):
        data = st.binary(max_size=8)
        return st.none() | data if type_.nullable else data
    if type_ is UUID:
        return st.uuids()
    assert isinstance(type_, Fixed), type_
    if type_.fmt == "?":
        return st.booleans()
    if type_ is FLOAT64:
        return st.floats(allow_nan=False)
    if type_ is UINT16:
        return st.integers(0, 2**16 - 1)
    bits = _RANGES[type_]
    return st.integers(-(2**bits), 2**bits - 1)


def present_only(value: Any, type_: Type) -> Any:
    """A decoded value without the fields its version lacks."""
    if isinstance(type_, Schema):
        return {f.name: present_only(value[f.name], t) for f, t in [*type_.present, *type_.tagged]}
    if isinstance(type_, Array) and value is not None:
        return [present_only(item, type_.elem) for item in value]
    return value


# --- the files say it ------------------------------------------------------------------------------------------


def _files() -> dict[str, dict[str, Any]]:
    from importlib import resources

    folder = resources.files("kafkaops.cluster.protocol").joinpath("message")
    # the request and response files; the `data` ones beside them are __consumer_offsets' record schemas
    names = ("Request.json", "Response.json")
    return {e.name: read_json(e.read_text(encoding="utf-8")) for e in folder.iterdir() if e.name.endswith(names)}


FILES = _files()


def test_every_kafka_2_8_request_and_response_is_loaded_with_its_ranges() -> None:
    assert len(FILES) == 130  # 65 APIs, a request and a response each
    for spec in FILES.values():
        table = REQUESTS if spec["type"] == "request" else RESPONSES
        message = table[ApiKey(spec["apiKey"])]
        assert message.name == spec["name"]
        low, _, high = spec["validVersions"].partition("-")
        assert (message.versions.start, message.versions.stop - 1) == (int(low), int(high or low))
        flexible = spec.get("flexibleVersions", "none")
        expected = None if flexible == "none" else int(flexible.rstrip("+"))
        assert message.first_flexible_version == expected, spec["name"]


def test_api_keys_are_kafkas_names_and_numbers() -> None:
    kafka = {
        spec["apiKey"]: re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", spec["name"].removesuffix("Request")).upper()
        for spec in FILES.values()
        if spec["type"] == "request"
    }
    assert {int(k): k.name for k in ApiKey} == kafka


def test_some_flexible_starts_and_header_versions_as_kafka_2_8_says() -> None:
    starts = {k: REQUESTS[k].first_flexible_version for k in ApiKey}
    assert starts[ApiKey.PRODUCE] == 9 and starts[ApiKey.FETCH] == 12 and starts[ApiKey.METADATA] == 9
    assert starts[ApiKey.CREATE_TOPICS] == 5 and starts[ApiKey.DESCRIBE_CLUSTER] == 0
    assert starts[ApiKey.SASL_HANDSHAKE] is None and starts[ApiKey.OFFSET_DELETE] is None
    assert messages.request_header_version(ApiKey.CONTROLLED_SHUTDOWN, 0) == 0
    assert messages.request_header_version(ApiKey.CONTROLLED_SHUTDOWN, 3) == 2
    assert messages.request_header_version(ApiKey.SASL_HANDSHAKE, 1) == 1
    assert messages.response_header_version(ApiKey.CREATE_TOPICS, 5) == 1
    assert messages.response_header_version(ApiKey.CREATE_TOPICS, 4) == 0


def test_field_names_are_kafkas_in_snake_case() -> None:
    assert snake_case("ThrottleTimeMs") == "throttle_time_ms"
    assert snake_case("V0Host") == "v0_host"
    fetch = RESPONSES[ApiKey.FETCH].schemas[12]
    partition = fetch.describe()
    assert "    diverging_epoch STRUCT (tag 0)" in partition and "    record_set COMPACT_RECORDS" in partition


def test_flexible_layout_known_answer() -> None:
    """CreateTopics v5 (flexible) by hand: compact strings and arrays, a tag buffer after every struct."""
    body = {
        "topics": [
            {
                "name": "t",
                "num_partitions": 3,
                "replication_factor": 2,
                "assignments": [],
                "configs": [{"name": "k", "value": None}],
            }
        ],
        "timeout_ms": 1000,
        "validate_only": True,
    }
    encoded = REQUESTS[ApiKey.CREATE_TOPICS].encode(body, 5)
    expected = "02 | 02 74 | 00000003 | 0002 | 01 | 02 | 02 6b | 00 | 00 | 00 | 000003e8 | 01 | 00"
    assert encoded.hex() == bytes.fromhex(expected.replace("|", "").replace(" ", "")).hex()


def test_tagged_fields_by_name_written_only_when_not_default_and_unknown_tags_skipped() -> None:
    response = RESPONSES[ApiKey.API_VERSIONS]
    base = {"error_code": 0, "api_keys": [], "throttle_time_ms": 0}
    assert response.encode(base, 3).hex() == "0000" + "01" + "00000000" + "00"
    with_tag = response.encode({**base, "finalized_features_epoch": 5}, 3)
    assert with_tag.hex() == "0000" + "01" + "00000000" + "01" + "01" + "08" + "0000000000000005"
    decoded = response.decode(with_tag, 3)
    assert decoded["finalized_features_epoch"] == 5 and decoded["supported_features"] == []
    unknown = bytes.fromhex("0000 01 00000000 02 01 08 0000000000000005 07 02 abcd".replace(" ", ""))
    assert response.decode(unknown, 3)["finalized_features_epoch"] == 5


# --- kafka-python ------------------------------------------------------------------------------------------------


def _kafka_python_classes() -> dict[tuple[int, str], Any]:
    try:
        protocol = importlib.import_module("kafka.protocol")
        from kafka.protocol.api_message import ApiMessage
    except ImportError:
        return {}
    for module in pkgutil.walk_packages(protocol.__path__, "kafka.protocol."):
        if ".old" not in module.name and not module.name.endswith(("generate_stubs", "parser")):
            importlib.import_module(module.name)
    found: dict[tuple[int, str], Any] = {}
    pending = list(ApiMessage.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if getattr(cls, "_class_version", None) is None and getattr(cls, "_json", None) is not None:
            found[cls.API_KEY, cls.type] = cls
    return found


THEIRS = _kafka_python_classes()


def _their_versions(cls: Any) -> range:
    low, _, high = cls.json["validVersions"].partition("-")
    return range(int(low), int(high or low) + 1)


def _cases() -> list[Any]:
    cases = []
    for (key, side), cls in sorted(THEIRS.items()):
        if key not in set(ApiKey):
            continue
        ours = (REQUESTS if side == "request" else RESPONSES)[ApiKey(key)]
        theirs = _their_versions(cls)
        for version in range(max(ours.versions.start, theirs.start), min(ours.versions.stop, theirs.stop)):
            cases.append(pytest.param(ApiKey(key), side, version, id=f"{ApiKey(key).name}-{side}-v{version}"))
    return cases


CASES = _cases()


def test_kafka_python_defines_most_apis_of_kafka_2_8() -> None:
    if not THEIRS:
        pytest.skip("kafka-python is not installed")
    both = {ApiKey(k) for k, _ in THEIRS if k in set(ApiKey)}
    assert {ApiKey.CREATE_TOPICS, ApiKey.DESCRIBE_CONFIGS, ApiKey.FETCH, ApiKey.DESCRIBE_CLUSTER} <= both
    assert len(CASES) > 300


def _adjust(key: ApiKey, side: str, version: int, value: dict[str, Any]) -> None:
    if key is ApiKey.METADATA and side == "request" and version == 0:
        value["topics"] = value["topics"] or []  # kafka-python rewrites v0's "all topics" as []
    if key is ApiKey.API_VERSIONS and side == "response":
        value["error_code"] = 0  # on an error kafka-python reads the body as v0 (its fallback, §3)


def _their_fields(field: Any) -> list[Any]:
    return list(field.array_of._fields if field.is_struct_array() else field._fields)


def _to_theirs(struct: Any, schema: Schema, value: dict[str, Any], version: int, top: Any = None) -> Any:
    """Our value as kafka-python's object, field by field in wire order (names may differ: kafka-python's
    JSON is newer, e.g. FetchResponse `partitions` for 2.8's `partition_responses`)."""
    untagged = struct.untagged_fields(version)
    assert len(untagged) == len(schema.present), (schema.name, [f.name for f in untagged])
    kwargs = {}
    for theirs, (ours, type_) in zip(untagged, schema.present, strict=True):
        kwargs[theirs.name] = _convert(theirs, type_, value[ours.name], version)
    tagged = {f.tag: f for f in _their_fields(struct) if f.for_version_q(version) and f.tagged_field_q(version)}
    for ours, type_ in schema.tagged:
        if value[ours.name] != ours.default:  # we write only non-default tags; so must they, here
            kwargs[tagged[ours.tag].name] = _convert(tagged[ours.tag], type_, value[ours.name], version)
    if top is not None:
        return top(version=version, **kwargs)
    return struct.data_class(**kwargs)


def _convert(field: Any, type_: Type, value: Any, version: int) -> Any:
    if value is None:
        return None
    if isinstance(type_, Array) and isinstance(type_.elem, Schema):
        return [_to_theirs(field, type_.elem, item, version) for item in value]
    if isinstance(type_, Schema):
        return _to_theirs(field, type_, value, version)
    if getattr(getattr(field, "_type", None), "__name__", "") == "BitField":
        # kafka-python patches the authorized-operations INT32s into sets of bit positions
        return field._type.from_32_bit_field(value & 0xFFFFFFFF)
    return value


def _their_encode(obj: Any) -> bytes:
    if not hasattr(obj, "_header"):
        obj._header = None  # kafka-python's decoded objects lack it, and DeleteTopicsRequest.encode needs it
    return bytes(obj.encode())


@pytest.mark.parametrize(("key", "side", "version"), CASES)
@settings(max_examples=8, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_byte_for_byte_with_kafka_python_both_ways(key: ApiKey, side: str, version: int, data: st.DataObject) -> None:
    message: Message = (REQUESTS if side == "request" else RESPONSES)[key]
    theirs = THEIRS[int(key), side]
    schema = message.schemas[version]
    value = data.draw(values(schema))
    _adjust(key, side, version, value)

    # ours -> kafka-python -> the same bytes
    ours = message.encode(value, version)
    assert _their_encode(theirs.decode(ours, version=version)) == ours

    # kafka-python's own object -> its bytes -> ours reads the value and writes the same bytes
    their_bytes = _to_theirs(theirs._struct, schema, value, version, top=theirs).encode()
    decoded = message.decode(their_bytes, version)
    assert present_only(decoded, schema) == present_only(value, schema)
    assert message.encode(decoded, version) == their_bytes


def test_the_copied_files_keep_apaches_license_header() -> None:
    from importlib import resources

    folder = resources.files("kafkaops.cluster.protocol").joinpath("message")
    for entry in folder.iterdir():
        if entry.name.endswith(".json"):
            assert "Licensed to the Apache Software Foundation (ASF)" in entry.read_text(encoding="utf-8")
    assert json.dumps(FILES["MetadataRequest.json"]["validVersions"]) == '"0-11"'

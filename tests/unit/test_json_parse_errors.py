"""Jackson's parse errors as Kafka 2.8 passes them on (`admin.json_parse_errors`): known answers printed by
jackson-core 2.10.5 (Kafka 2.8's) itself, reading each text token by token as `ObjectMapper.readTree` does;
then the reassignment tool's texts."""

from __future__ import annotations

import pytest

from kafkaops.admin import reassignment as files
from kafkaops.admin.json_parse_errors import EMPTY_INPUT, jackson_parse_error, read_tree
from kafkaops.cluster.common.errors import AdminOperationError, InvalidArgumentError

KNOWN_ANSWERS = [
    ('{"version":1,"partitions":[}',
     'Unexpected close marker \'}\': expected \']\' (for Array starting at [Source: (String)"{"version":1,"partitions":[}"; line: 1, column: 27])\n at [Source: (String)"{"version":1,"partitions":[}"; line: 1, column: 29]'),
    ('{"version":1',
     'Unexpected end-of-input: expected close marker for Object (start marker at [Source: (String)"{"version":1"; line: 1, column: 1])\n at [Source: (String)"{"version":1"; line: 1, column: 13]'),
    ('foo',
     'Unrecognized token \'foo\': was expecting (JSON String, Number, Array, Object or token \'null\', \'true\' or \'false\')\n at [Source: (String)"foo"; line: 1, column: 4]'),
    ('{"a":1,}',
     'Unexpected character (\'}\' (code 125)): was expecting double-quote to start field name\n at [Source: (String)"{"a":1,}"; line: 1, column: 9]'),
    ('[1,]',
     'Unexpected character (\']\' (code 93)): expected a valid value (JSON String, Number, Array, Object or token \'null\', \'true\' or \'false\')\n at [Source: (String)"[1,]"; line: 1, column: 5]'),
    ('{"a" 1}',
     'Unexpected character (\'1\' (code 49)): was expecting a colon to separate field name and value\n at [Source: (String)"{"a" 1}"; line: 1, column: 7]'),
    ('{"a":1 "b":2}',
     'Unexpected character (\'"\' (code 34)): was expecting comma to separate Object entries\n at [Source: (String)"{"a":1 "b":2}"; line: 1, column: 9]'),
    ('{"a":01}',
     'Invalid numeric value: Leading zeroes not allowed\n at [Source: (String)"{"a":01}"; line: 1, column: 7]'),
    ('{"a":"x\ny"}',
     'Illegal unquoted character ((CTRL-CHAR, code 10)): has to be escaped using backslash to be included in string value\n at [Source: (String)"{"a":"x\ny"}"; line: 1, column: 9]'),
    ('{"a":NaN}',
     'Non-standard token \'NaN\': enable JsonParser.Feature.ALLOW_NON_NUMERIC_NUMBERS to allow\n at [Source: (String)"{"a":NaN}"; line: 1, column: 9]'),
    ("{'a':1}",
     'Unexpected character (\'\'\' (code 39)): was expecting double-quote to start field name\n at [Source: (String)"{\'a\':1}"; line: 1, column: 3]'),
    ('{"a":"\\q"}',
     'Unrecognized character escape \'q\' (code 113)\n at [Source: (String)"{"a":"\\q"}"; line: 1, column: 9]'),
    ('{"a":-}',
     'Unexpected character (\'}\' (code 125)) in numeric value: expected digit (0-9) to follow minus sign, for valid numeric value\n at [Source: (String)"{"a":-}"; line: 1, column: 8]'),
    ('{"a":1.}',
     'Unexpected character (\'}\' (code 125)) in numeric value: Decimal point not followed by a digit\n at [Source: (String)"{"a":1.}"; line: 1, column: 8]'),
    ('{"a":"abc',
     'Unexpected end-of-input: was expecting closing quote for a string value\n at [Source: (String)"{"a":"abc"; line: 1, column: 10]'),
    ('{"a":1]',
     'Unexpected close marker \']\': expected \'}\' (for Object starting at [Source: (String)"{"a":1]"; line: 1, column: 1])\n at [Source: (String)"{"a":1]"; line: 1, column: 8]'),
    ('}',
     'Unexpected close marker \'}\': expected \']\' (for root starting at [Source: (String)"}"; line: 1, column: 0])\n at [Source: (String)"}"; line: 1, column: 2]'),
    ('{"a":}',
     'Unexpected character (\'}\' (code 125)): expected a value\n at [Source: (String)"{"a":}"; line: 1, column: 7]'),
    ('[1,}',
     'Unexpected character (\'}\' (code 125)): expected a value\n at [Source: (String)"[1,}"; line: 1, column: 5]'),
    ('{"ab',
     'Unexpected end-of-input in field name\n at [Source: (String)"{"ab"; line: 1, column: 5]'),
    ('[1,',
     'Unexpected end-of-input within/between Array entries\n at [Source: (String)"[1,"; line: 1, column: 4]'),
    ('{"a":1e',
     'Unexpected end-of-inputexpected a digit for number exponent\n at [Source: (String)"{"a":1e"; line: 1, column: 8]'),
    ('{"a":-',
     'Unexpected end-of-inputNo digit following minus sign\n at [Source: (String)"{"a":-"; line: 1, column: 7]'),
    ('{"a":"\\u12"}',
     'Unexpected character (\'"\' (code 34)): expected a hex-digit for character escape sequence\n at [Source: (String)"{"a":"\\u12"}"; line: 1, column: 12]'),
    ('{"a":+1}',
     'Unexpected character (\'1\' (code 49)) in numeric value: expected digit (0-9) to follow minus sign, for valid numeric value\n at [Source: (String)"{"a":+1}"; line: 1, column: 8]'),
    ('{/}',
     'Unexpected character (\'/\' (code 47)): maybe a (non-standard) comment? (not recognized as one since Feature \'ALLOW_COMMENTS\' not enabled for parser)\n at [Source: (String)"{/}"; line: 1, column: 3]'),
    ('\ufeff{"a":1}',
     'Unexpected character (\'\ufeff\' (code 65279 / 0xfeff)): expected a valid value (JSON String, Number, Array, Object or token \'null\', \'true\' or \'false\')\n at [Source: (String)"\ufeff{"a":1}"; line: 1, column: 2]'),
    ('{"a":-0.}',
     'Unexpected character (\'}\' (code 125)) in numeric value: Decimal point not followed by a digit\n at [Source: (String)"{"a":-0.}"; line: 1, column: 10]'),
    ('{"a":1.5e+x}',
     'Unexpected character (\'x\' (code 120)) in numeric value: Exponent indicator not followed by a digit\n at [Source: (String)"{"a":1.5e+x}"; line: 1, column: 8]'),
    ('{"a":true$}',
     'Unexpected character (\'$\' (code 36)): was expecting comma to separate Object entries\n at [Source: (String)"{"a":true$}"; line: 1, column: 11]'),
    ('{\x01}',
     'Illegal character ((CTRL-CHAR, code 1)): only regular white space (\\r, \\n, \\t) is allowed between tokens\n at [Source: (String)"{\x01}"; line: 1, column: 3]'),
    ('{"a":Infinity}',
     'Non-standard token \'Infinity\': enable JsonParser.Feature.ALLOW_NON_NUMERIC_NUMBERS to allow\n at [Source: (String)"{"a":Infinity}"; line: 1, column: 14]'),
    ('1x',
     'Unexpected character (\'x\' (code 120)): Expected space separating root-level values\n at [Source: (String)"1x"; line: 1, column: 3]'),
    ('{\n  "version": 1,\n  "partitions": [\n    {"topic": "t", "partition": 0, "replicas": [1,2]\n  ]\n}\n',
     'Unexpected close marker \']\': expected \'}\' (for Object starting at [Source: (String)"{\n  "version": 1,\n  "partitions": [\n    {"topic": "t", "partition": 0, "replicas": [1,2]\n  ]\n}\n"; line: 4, column: 5])\n at [Source: (String)"{\n  "version": 1,\n  "partitions": [\n    {"topic": "t", "partition": 0, "replicas": [1,2]\n  ]\n}\n"; line: 5, column: 4]'),
    ('{\r\n"a":\r\n tru}',
     'Unrecognized token \'tru\': was expecting (JSON String, Number, Array, Object or token \'null\', \'true\' or \'false\')\n at [Source: (String)"{\r\n"a":\r\n tru}"; line: 3, column: 5]'),
    ('{"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 1, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 2, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 3, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 4, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 5, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 6, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 7, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 8, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 9, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 10, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 11, "replicas": [1, 2, 3]}}',
     'Unexpected close marker \'}\': expected \']\' (for Array starting at [Source: (String)"{"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 1, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 2, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 3, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 4, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 5, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 6, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 7, "replicas": [1"[truncated 251 chars]; line: 1, column: 30])\n at [Source: (String)"{"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 1, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 2, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 3, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 4, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 5, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 6, "replicas": [1, 2, 3]}, {"topic": "orders", "partition": 7, "replicas": [1"[truncated 251 chars]; line: 1, column: 752]'),
]  # fmt: skip


@pytest.mark.parametrize(("text", "message"), KNOWN_ANSWERS)
def test_jackson_2_10_messages(text: str, message: str) -> None:
    assert jackson_parse_error(text) == message


@pytest.mark.parametrize(
    "text",
    [
        '{"version":1,"partitions":[]}',
        '{"a":[1,-2.5e+3,0,0.0,true,false,null,"\\u00e9\\n"],"b":{}}',
        '{"a":1} trailing text is ignored, as readTree ignores it',
        '{"a":1}}',
        "  \n\t 7 ",
    ],
)
def test_what_jackson_reads(text: str) -> None:
    assert jackson_parse_error(text) is None


def test_read_tree() -> None:
    assert read_tree('{"a":[1]} x') == {"a": [1]}
    with pytest.raises(AdminOperationError) as caught:
        read_tree("")
    assert (
        str(caught.value)
        == EMPTY_INPUT
        == "The input string shouldn't be empty\n at [Source: UNKNOWN; line: -1, column: -1]"
    )
    with pytest.raises(InvalidArgumentError, match="^Expected JSON object, received $"):
        files.parse_reassignment_json(" \n")


def test_a_malformed_reassignment_file_gets_the_parsers_message() -> None:
    text = '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2]}\n{"topic":"foo","partition":1}]}'
    with pytest.raises(AdminOperationError) as caught:
        files.parse_reassignment_json(text)
    assert str(caught.value) == (
        "Unexpected character ('{' (code 123)): was expecting comma to separate Array entries\n"
        f' at [Source: (String)"{text}"; line: 2, column: 2]'
    )

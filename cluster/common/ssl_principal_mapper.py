"""Kafka's `SslPrincipalMapper`: `ssl.principal.mapping.rules` turn a client certificate's distinguished name
into the principal's name.

Rules, tried in order, the first that applies wins: `DEFAULT` (the DN itself) or
`RULE:pattern/replacement/[LU]` (the whole DN must match the Java regex `pattern`; `replaceAll` with the
Java replacement, `$n` a group; `L`/`U` lower- or upper-cases the result). Python's `re` stands in for
`java.util.regex`: the patterns people write (groups, classes, `.*`, anchors) mean the same in both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_SSL_PRINCIPAL_MAPPING_RULES = "DEFAULT"

_RULE_PATTERN = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_RULE_SPLITTER = re.compile(r"\s*(" + _RULE_PATTERN + r")\s*(,\s*|$)")
_RULE_PARSER = re.compile(_RULE_PATTERN)


class NoMatchingRule(Exception):
    """No rule applies to a DN (Kafka's `SslPrincipalMapper.NoMatchingRule`): the connection is refused."""


@dataclass(frozen=True)
class Rule:
    is_default: bool = True
    pattern: str = ""
    replacement: str = ""
    to_lower_case: bool = False
    to_upper_case: bool = False

    def apply(self, distinguished_name: str) -> str | None:
        if self.is_default:
            return distinguished_name
        compiled = re.compile(self.pattern)
        if compiled.fullmatch(distinguished_name) is None:
            return None
        groups = compiled.groups
        result = compiled.sub(lambda m: _java_replacement(self.replacement, m, groups), distinguished_name)
        if self.to_lower_case:
            return result.lower()
        if self.to_upper_case:
            return result.upper()
        return result

    def __str__(self) -> str:
        if self.is_default:
            return "DEFAULT"
        case = "/L" if self.to_lower_case else "/U" if self.to_upper_case else ""
        return f"RULE:{self.pattern}/{self.replacement}{case}"


def _java_replacement(template: str, match: re.Match[str], groups: int) -> str:
    """`Matcher.appendReplacement`'s reading of a replacement, after Kafka's `escapeLiteralBackReferences`:
    `\\x` is a literal x; `$n` is group n, digits taken while the number stays a group (a reference past the
    last group is literal text, as Kafka escapes it)."""
    out: list[str] = []
    i = 0
    while i < len(template):
        char = template[i]
        if char == "\\" and i + 1 < len(template):
            out.append(template[i + 1])
            i += 2
            continue
        if char == "$" and i + 1 < len(template) and template[i + 1].isdigit():
            j = i + 1
            number = int(template[j])
            j += 1
            while j < len(template) and template[j].isdigit() and number * 10 + int(template[j]) <= groups:
                number = number * 10 + int(template[j])
                j += 1
            if number <= groups and (groups > 0 or number == 0):
                out.append(match.group(number) or "")
            else:
                out.append(template[i:j])
            i = j
            continue
        out.append(char)
        i += 1
    return "".join(out)


def parse_rules(rules: str | None) -> tuple[Rule, ...]:
    """The rules of `ssl.principal.mapping.rules`. Raises ValueError with Kafka's "Invalid rule" texts."""
    text = DEFAULT_SSL_PRINCIPAL_MAPPING_RULES if rules is None else rules
    parsed: list[Rule] = []
    for split in _RULE_SPLITTER.finditer(text.strip()):
        rule = split.group(1)
        match = _RULE_PARSER.match(rule)
        if match is None:
            raise ValueError(f"Invalid rule: {rule}")
        if len(rule) != match.end():
            raise ValueError(f"Invalid rule: `{rule}`, unmatched substring: `{rule[match.end() :]}`")
        if match.group(1) is not None:
            parsed.append(Rule())
        elif match.group(2) is not None:
            parsed.append(Rule(False, match.group(2), match.group(4), match.group(6) == "L", match.group(6) == "U"))
    return tuple(parsed)


@dataclass(frozen=True)
class SslPrincipalMapper:
    rules: tuple[Rule, ...]

    @classmethod
    def from_rules(cls, rules: str | None) -> SslPrincipalMapper:
        """Raises ValueError for a malformed rule."""
        return cls(parse_rules(rules))

    def get_name(self, distinguished_name: str) -> str:
        """The principal name of a DN. Raises NoMatchingRule."""
        for rule in self.rules:
            name = rule.apply(distinguished_name)
            if name is not None:
                return name
        shown = "[" + ", ".join(str(r) for r in self.rules) + "]"
        raise NoMatchingRule(f"No rules apply to {distinguished_name}, rules {shown}")

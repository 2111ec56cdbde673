"""Kafka's `KafkaPrincipal`: who a connection is, as the authorizer, the quotas and the ACL tools name it
(`User:alice`). The network layer sets it once per connection (ANONYMOUS on PLAINTEXT, the SASL user or the
TLS certificate's mapped DN otherwise); the handlers only read it.
"""

from __future__ import annotations

from dataclasses import dataclass

USER_TYPE = "User"


@dataclass(frozen=True, slots=True)
class KafkaPrincipal:
    principal_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"

    @classmethod
    def from_string(cls, text: str) -> KafkaPrincipal:
        """`SecurityUtils.parseKafkaPrincipal`: the type before the first ':', the name after it."""
        principal_type, sep, name = text.partition(":")
        if not sep or not principal_type or not name:
            raise ValueError(f"expected a string in format principalType:principalName but got {text}")
        return cls(principal_type, name)


ANONYMOUS = KafkaPrincipal(USER_TYPE, "ANONYMOUS")
"""The principal of every connection without authentication (PLAINTEXT, SSL without a client certificate)."""

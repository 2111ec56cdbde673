"""The broker's SCRAM credentials (Kafka's `CredentialProvider` over its `CredentialCache`): one map per
SCRAM mechanism, user → credential, filled from `/config/users/<user>` at start-up and on each config change
notification (the dynamic config manager), read by the SASL listeners' SCRAM servers.

Threads: written on kazoo's thread, read on the broker's event loop; each update replaces one dict entry,
which Python does atomically.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from kafkaops.cluster.common.scram import CredentialLookup, ScramCredential, ScramMechanism

log = logging.getLogger("kafkaops.broker")


class CredentialProvider:
    def __init__(self) -> None:
        self._caches: dict[ScramMechanism, dict[str, ScramCredential]] = {m: {} for m in ScramMechanism}

    def update_credentials(self, user: str, config: Mapping[str, str]) -> None:
        """`CredentialProvider.updateCredentials`: the user's credentials are those of its config now (a
        mechanism missing from it is removed). A credential that does not parse is dropped and logged."""
        for mechanism, cache in self._caches.items():
            text = config.get(mechanism.mechanism_name)
            if text is None:
                cache.pop(user, None)
                continue
            try:
                cache[user] = ScramCredential.from_string(text)
            except ValueError as error:
                cache.pop(user, None)
                log.error("Ignoring the %s credential of user %s: %s", mechanism.mechanism_name, user, error)

    def lookup(self, mechanism: ScramMechanism) -> CredentialLookup:
        return self._caches[mechanism].get

"""The users' SCRAM credentials as this broker knows them (Kafka's ``CredentialCache``, kept by
its ``UserConfigHandler``): read from ZooKeeper's ``/config/users/[user]`` when the broker
starts, and again for a user whenever a ``/config/changes`` notification names it
(``users/<sanitized user>``; see :mod:`broker_lite.zk.users` for the format). SCRAM exchanges
look credentials up here, in memory, from the network threads: no authentication waits for
ZooKeeper.

A credential that does not parse is logged (without its value) and the user gets none for that
mechanism, so a bad znode costs that user their login, never the broker.
"""

import logging
import threading

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException

from broker_lite.security.scram import ScramCredential
from broker_lite.zk.errors import MalformedZnodeError
from broker_lite.zk.users import (
    desanitize,
    scram_credentials,
    user_config,
    user_path,
    users_with_config,
)

logger = logging.getLogger(__name__)


class ScramCredentialCache:
    """``get(mechanism, user)`` gives the stored credential, or None."""

    def __init__(self, client: KazooClient):
        self._client = client
        self._credentials: dict[str, dict[str, ScramCredential]] = {}
        self._changed = threading.Condition()

    def load(self) -> None:
        """Read every user's credentials (at start-up)."""
        for user in users_with_config(self._client):
            self.reload_user(user)

    def on_change(self, sanitized_name: str) -> None:
        """A config change notification for ``users/<sanitized_name>`` (user-and-client quota
        entities, ``users/<u>/clients/<c>``, carry no credential)."""
        if "/" not in sanitized_name:
            self.reload_user(desanitize(sanitized_name))

    def reload_user(self, user: str) -> None:
        try:
            found = scram_credentials(user_config(self._client, user), user_path(user))
        except MalformedZnodeError as exc:
            logger.warning("ignoring the SCRAM credentials of user %r: %s", user, exc)
            found = {}
        except KazooException as exc:
            logger.warning("could not read the SCRAM credentials of user %r: %s", user, exc)
            return
        with self._changed:
            if found:
                self._credentials[user] = found
            else:
                self._credentials.pop(user, None)
            self._changed.notify_all()

    def get(self, mechanism: str, user: str) -> ScramCredential | None:
        return self._credentials.get(user, {}).get(mechanism)

    def wait_for(self, mechanism: str, user: str, credential: ScramCredential | None,
                 timeout_s: float) -> bool:
        """Wait until the credential known for ``user`` is ``credential`` (None: until it has
        none); whether it came to be within ``timeout_s``."""
        with self._changed:
            return self._changed.wait_for(lambda: self.get(mechanism, user) == credential,
                                          timeout_s)

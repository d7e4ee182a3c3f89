"""Users' SCRAM credentials (KIP-554): DescribeUserScramCredentials and
AlterUserScramCredentials, as Kafka's ``Admin.describeUserScramCredentials`` and
``alterUserScramCredentials``; get one from :attr:`.admin.Admin.scram_credentials`.

Describing goes to any broker and gives each user's mechanisms and iteration counts, never a
key. Altering goes to the controller (others answer NOT_CONTROLLER, and the request is sent
again once the metadata names the controller): an upsertion sends the salt and the salted
password, ``Hi(password, salt, iterations)``, computed here with a random salt as Kafka's admin
client computes it, so the password itself never leaves the client; a deletion names the user
and mechanism.

>>> UserScramCredentialUpsertion("alice", "SCRAM-SHA-256", "alice-secret", iterations=8192)
UserScramCredentialUpsertion(user='alice', mechanism='SCRAM-SHA-256', iterations=8192)
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field

from broker_lite.protocol import ApiKey
from broker_lite.security.scram import MECHANISM_TYPES, MIN_ITERATIONS, salted_password

from ..cluster.cluster import Cluster
from ..errors import InvalidArgumentError, InvalidResponseError, KafkaClientError, error_for
from ..retry import retry

MECHANISM_NAMES = {number: name for name, number in MECHANISM_TYPES.items()}
SALT_BYTES = 32  # the random salt of an upsertion (Kafka's ScramFormatter.secureRandomBytes)


@dataclass(frozen=True)
class ScramCredentialInfo:
    """One credential of a user: its mechanism and iteration count."""

    mechanism: str
    iterations: int


@dataclass(frozen=True)
class UserScramCredentialUpsertion:
    """Set ``user``'s credential for ``mechanism`` from ``password`` (``iterations`` at least
    4096, at most 16384: the broker refuses others)."""

    user: str
    mechanism: str
    password: str = field(repr=False)
    iterations: int = MIN_ITERATIONS


@dataclass(frozen=True)
class UserScramCredentialDeletion:
    """Remove ``user``'s credential for ``mechanism``."""

    user: str
    mechanism: str


def _mechanism_type(mechanism: str) -> int:
    try:
        return MECHANISM_TYPES[mechanism]
    except KeyError:
        raise InvalidArgumentError(f"unknown SCRAM mechanism {mechanism!r}; expected one of "
                                   f"{', '.join(MECHANISM_TYPES)}") from None


def alter_request(alterations: Iterable[UserScramCredentialUpsertion |
                                        UserScramCredentialDeletion]) -> dict:
    """The AlterUserScramCredentials body (salts drawn now)."""
    body: dict = {"deletions": [], "upsertions": []}
    for alteration in alterations:
        mechanism = _mechanism_type(alteration.mechanism)
        if isinstance(alteration, UserScramCredentialDeletion):
            body["deletions"].append({"name": alteration.user, "mechanism": mechanism})
            continue
        salt = secrets.token_bytes(SALT_BYTES)
        body["upsertions"].append({
            "name": alteration.user, "mechanism": mechanism,
            "iterations": alteration.iterations, "salt": salt,
            "salted_password": salted_password(alteration.mechanism, alteration.password, salt,
                                               alteration.iterations)})
    return body


class ScramCredentialsAdmin:
    """Describe and alter users' SCRAM credentials over a client's connections."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster

    def describe(self, users: Iterable[str] | None = None
                 ) -> dict[str, list[ScramCredentialInfo] | KafkaClientError]:
        """Per user (every user with a credential when ``users`` is None or empty): its
        credentials, or the broker's error for it (a user without any:
        :class:`~.errors.ResourceNotFoundError`)."""
        body = {"users": [{"name": user} for user in users] if users else None}
        deadline = self.cluster.deadline()

        def attempt() -> dict:
            _, response = self.cluster.request_any(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
                                                   body, deadline)
            error = error_for(response["error_code"], response.get("error_message"))
            if error is not None:
                raise error
            return response

        response = retry("describe_user_scram_credentials", deadline, self.cluster.backoff(),
                         attempt, self.cluster.on_retriable)
        results: dict = {}
        for result in response["results"]:
            user = result["user"]
            error = error_for(result["error_code"], result.get("error_message"),
                              where=f"user {user}")
            results[user] = error if error is not None else [
                ScramCredentialInfo(MECHANISM_NAMES.get(info["mechanism"], "UNKNOWN"),
                                    info["iterations"])
                for info in result["credential_infos"]]
        return results

    def alter(self, alterations: Iterable[UserScramCredentialUpsertion |
                                          UserScramCredentialDeletion]) -> None:
        """Apply the alterations; raises the first user's error
        (:class:`~.errors.UnacceptableCredentialError` for iterations out of bounds,
        :class:`~.errors.ResourceNotFoundError` deleting a credential that does not exist,
        :class:`~.errors.DuplicateResourceError` for a user and mechanism twice)."""
        body = alter_request(alterations)
        users = {a["name"] for a in (*body["deletions"], *body["upsertions"])}
        deadline = self.cluster.deadline()

        def attempt() -> None:
            _, response = self.cluster.request_controller(
                ApiKey.ALTER_USER_SCRAM_CREDENTIALS, body, deadline)
            answered = {r["user"]: r for r in response["results"]}
            missing = users - set(answered)
            if missing:
                raise InvalidResponseError(f"the AlterUserScramCredentials response has no "
                                           f"result for {sorted(missing)}")
            for user in sorted(users):
                result = answered[user]
                error = error_for(result["error_code"], result.get("error_message"),
                                  where=f"user {user}")
                if error is not None:
                    raise error

        retry("alter_user_scram_credentials", deadline, self.cluster.backoff(), attempt,
              self.cluster.on_retriable)

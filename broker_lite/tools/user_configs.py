"""``broker-lite configs --entity-type users``: users' SCRAM credentials, as ``kafka-configs.sh``
handles them (KIP-554; with ``--zookeeper``, as Kafka 2.x did, to bootstrap the first users of a
cluster before any broker can authenticate anyone).

    broker-lite configs --bootstrap-server 127.0.0.1:9093 --command-config admin.properties \\
        --entity-type users --entity-name alice \\
        --alter --add-config 'SCRAM-SHA-256=[iterations=8192,password=alice-secret]'
    broker-lite configs --bootstrap-server ... --entity-type users --entity-name alice \\
        --alter --delete-config SCRAM-SHA-256
    broker-lite configs --bootstrap-server ... --entity-type users [--entity-name alice] --describe
    broker-lite configs --zookeeper 127.0.0.1:2181 --entity-type users --entity-name broker \\
        --alter --add-config 'SCRAM-SHA-512=[password=broker-secret]'

A credential is added as ``<mechanism>=[iterations=<n>,password=<password>]`` (iterations 4096
unless given, at least 4096) and deleted by its mechanism's name. Through a broker, the client
computes the salted password (AlterUserScramCredentials); with ``--zookeeper``, the tool stores
the credential itself in ``/config/users/<user>`` and notifies the brokers, as Kafka's
``ConfigCommand`` did. Passwords are never printed.

Output (stdout)::

    SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, \
SCRAM-SHA-512=iterations=4096
    Error retrieving SCRAM credential configs for user-principal 'bob': RESOURCE_NOT_FOUND ...
    Completed updating config for user alice.
    Completed updating config for entity: user-principal 'alice'.       (--zookeeper)

Configs other than SCRAM credentials (quotas: ``producer_byte_rate``, ...) are refused: broker_lite
has no client quotas.
"""

from __future__ import annotations

import re

from broker_lite.client.admin.scram import (
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from broker_lite.security.scram import MECHANISMS, MIN_ITERATIONS, ScramCredential

from .common import ToolError

DEFAULT_ITERATIONS = 4096  # Kafka's ConfigCommand.DefaultScramIterations
# Kafka's ConfigCommand pattern for a credential's value.
_CREDENTIAL = re.compile(r"(?:iterations=(-?[0-9]*),)?password=(.*)", re.S)


def _iterations_and_password(mechanism: str, text: str) -> tuple[int, str]:
    match = _CREDENTIAL.fullmatch(text)
    if match is None:
        raise ToolError(f"Invalid credential property {mechanism}=[...]: expected "
                        f"[iterations=<n>,]password=<password>")
    iterations_text, password = match.groups()
    iterations = int(iterations_text) if iterations_text not in (None, "", "-1") \
        else DEFAULT_ITERATIONS
    if iterations < MIN_ITERATIONS:
        raise ToolError(f"Iterations {iterations} is less than the minimum {MIN_ITERATIONS} "
                        f"required for {mechanism}")
    return iterations, password


def check_names(added: dict[str, str], deleted: list[str]) -> None:
    """Only SCRAM credentials are user configs here."""
    for verb, names in (("added", list(added)), ("deleted", deleted)):
        unexpected = [n for n in names if n not in MECHANISMS]
        if unexpected:
            raise ToolError(f"Only SCRAM credential configs ({', '.join(MECHANISMS)}) can be "
                            f"{verb} for 'users' (broker_lite has no client quotas). Unexpected "
                            f"config names: {', '.join(unexpected)}")


def describe(admin, user: str | None) -> None:
    results = admin.scram_credentials.describe([user] if user is not None else None)
    for name, outcome in results.items():
        if isinstance(outcome, Exception):
            print(f"Error retrieving SCRAM credential configs for user-principal '{name}': "
                  f"{outcome}")
            continue
        text = ", ".join(f"{info.mechanism}=iterations={info.iterations}" for info in outcome)
        print(f"SCRAM credential configs for user-principal '{name}' are {text}")


def alter(admin, user: str, added: dict[str, str], deleted: list[str]) -> None:
    check_names(added, deleted)
    alterations = [UserScramCredentialDeletion(user, mechanism) for mechanism in deleted]
    for mechanism, text in added.items():
        iterations, password = _iterations_and_password(mechanism, text)
        alterations.append(UserScramCredentialUpsertion(user, mechanism, password, iterations))
    admin.scram_credentials.alter(alterations)
    print(f"Completed updating config for user {user}.")


def describe_zookeeper(client, user: str | None) -> None:
    from broker_lite.zk.users import scram_credentials, user_config, user_path, users_with_config

    for name in ([user] if user is not None else users_with_config(client)):
        found = scram_credentials(user_config(client, name), user_path(name))
        if found or user is not None:
            text = ", ".join(f"{m}=iterations={c.iterations}" for m, c in found.items())
            print(f"SCRAM credential configs for user-principal '{name}' are {text}")


def alter_zookeeper(client, user: str, added: dict[str, str], deleted: list[str]) -> None:
    from broker_lite.zk.users import set_user_config, user_config

    check_names(added, deleted)
    config = user_config(client, user)
    for mechanism in deleted:
        config.pop(mechanism, None)
    for mechanism, text in added.items():
        iterations, password = _iterations_and_password(mechanism, text)
        try:
            config[mechanism] = ScramCredential.from_password(mechanism, password,
                                                              iterations=iterations).to_text()
        except ValueError as exc:  # iterations above the most a broker accepts
            raise ToolError(str(exc)) from None
    set_user_config(client, user, config)
    print(f"Completed updating config for entity: user-principal '{user}'.")

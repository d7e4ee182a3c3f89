"""What the sink must be allowed to do on a cluster with ACLs, and the errors that say so.

Kafka's authorizer answers a refusal with an error code only (``TOPIC_AUTHORIZATION_FAILED``,
``TRANSACTIONAL_ID_AUTHORIZATION_FAILED``, ...). A refused write fails with that error, the
principal refused (:func:`broker_lite.client.principal.principal_of`), the resource and the
operation, and, since the exactly-once default needs more than Spark's own Kafka sink, every ACL
that default needs and the alternative, ``kpy.sink.guarantee=at_least_once``. The ACLs, as
Kafka's documentation lists them for its producers ("Authorization and ACLs"):

================================  ===========================================================
exactly_once (the default)        Write and Describe on TransactionalId prefix ``kpy-`` (its
                                  transactional ids, ``kpy-<query id>-<partition>``); Read on
                                  Group prefix ``kpy-sink-`` (the driver's commit decisions);
                                  Write and Describe on the topics written, and Read on them
                                  (the decisions are recorded against a topic written)
at_least_once                     Write and Describe on the topics written, and, on brokers
                                  before Kafka 2.8 (KIP-679), IdempotentWrite on the cluster
================================  ===========================================================
"""

from __future__ import annotations

from collections.abc import Mapping

from broker_lite.client.config import ClientConfig
from broker_lite.client.errors import (
    ClusterAuthorizationFailedError,
    GroupAuthorizationFailedError,
    KafkaApiError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
)
from broker_lite.client.principal import principal_of

from .decisions import SINK_GROUP_PREFIX

TRANSACTIONAL_ID_PREFIX = "kpy-"

EXACTLY_ONCE_ACLS = (
    f"Write and Describe on TransactionalId prefix '{TRANSACTIONAL_ID_PREFIX}', Read on Group "
    f"prefix '{SINK_GROUP_PREFIX}', and Write, Describe and Read on the topics written")
AT_LEAST_ONCE_ACLS = ("Write and Describe on the topics written (and IdempotentWrite on the "
                      "cluster before Kafka 2.8)")

AUTHORIZATION_ERRORS = (TopicAuthorizationFailedError, TransactionalIdAuthorizationFailedError,
                        GroupAuthorizationFailedError, ClusterAuthorizationFailedError)


def refused(exc: KafkaApiError, client: Mapping[str, str], *, exactly_once: bool,
            resources: Mapping[type, tuple[str, str]]) -> KafkaApiError:
    """``exc``, an authorization failure of the sink, as the same error with a message that says
    what to grant. ``resources`` gives, per error type, the operation and the resource refused
    (``{TopicAuthorizationFailedError: ("Write", "Topic 'events'"), ...}``)."""
    principal = principal_of(ClientConfig(client))
    operation, resource = next(
        (found for kind, found in resources.items() if isinstance(exc, kind)),
        ("IdempotentWrite", "the Cluster") if isinstance(exc, ClusterAuthorizationFailedError)
        else ("use", "a resource of the sink"))
    if exactly_once:
        advice = (f"the exactly-once sink (kpy.sink.guarantee=exactly_once, the default) needs "
                  f"these ACLs for {principal}: {EXACTLY_ONCE_ACLS}; grant them, or write at "
                  f"least once with kpy.sink.guarantee=at_least_once, which needs "
                  f"{AT_LEAST_ONCE_ACLS}. Nothing of this write is visible to read_committed "
                  "readers")
    else:
        advice = f"the at-least-once sink needs these ACLs for {principal}: {AT_LEAST_ONCE_ACLS}"
    return type(exc)(f"the kpy sink's principal {principal} may not {operation} {resource} "
                     f"({exc}); {advice}", where=exc.where)

"""DescribeUserScramCredentials and AlterUserScramCredentials (KIP-554), as Kafka's ZooKeeper
-mode broker answers them (``ZkAdminManager``): the credentials live in the users' configs in
ZooKeeper (:mod:`broker_lite.zk.users`), which every broker follows.

Describe: every user with a SCRAM credential (the request's users null or empty), sorted; or
the users named, once each, in order. Per user, its mechanisms and iterations. A user named
twice is DUPLICATE_RESOURCE, an empty name or a user without credentials RESOURCE_NOT_FOUND.

Alter (only on the controller: others answer NOT_CONTROLLER for every user, and the client
retries there): deletions and upsertions, checked per user, in Kafka's order; a user with any
refusal is left as it was:

==========================================================  ===========================
refusal                                                      error
==========================================================  ===========================
empty user name                                              UNACCEPTABLE_CREDENTIAL
mechanism other than 1 (SCRAM-SHA-256) and 2 (SCRAM-SHA-512)  UNSUPPORTED_SASL_MECHANISM
iterations below 4096 / above 16384                          UNACCEPTABLE_CREDENTIAL
the same user and mechanism twice in the request             DUPLICATE_RESOURCE
deleting a credential the user does not have                 RESOURCE_NOT_FOUND
==========================================================  ===========================

An upsertion carries the salt and the salted password; the broker stores the derived keys
(:meth:`~broker_lite.security.scram.ScramCredential.from_salted_password`), never the password.
"""

from broker_lite.protocol import ErrorCode
from broker_lite.security.scram import MECHANISM_TYPES, MIN_ITERATIONS, ScramCredential
from broker_lite.zk.errors import MalformedZnodeError, ZooKeeperError
from broker_lite.zk.users import scram_credentials

from ..dispatcher import RequestContext
from ..errors import error_code_for

MECHANISM_NAMES = {number: name for name, number in MECHANISM_TYPES.items()}
MAX_ITERATIONS = 16384  # ZkAdminManager's maxIterations
_EMPTY_USER = "Username must not be empty"
_UNKNOWN_MECHANISM = "Unknown SCRAM mechanism"


def _result(user: str, error: ErrorCode = ErrorCode.NONE, message: str | None = None) -> dict:
    return {"user": user, "error_code": error, "error_message": message}


def _description(user: str, error: ErrorCode = ErrorCode.NONE, message: str | None = None,
                 infos: list | None = None) -> dict:
    return {**_result(user, error, message), "credential_infos": infos or []}


def _described(user: str, config: dict) -> dict | None:
    """The user's credentials, None when it has none."""
    if not any(name in config for name in MECHANISM_TYPES):
        return None
    try:
        found = scram_credentials(config)
    except MalformedZnodeError as exc:
        return _description(user, ErrorCode.UNKNOWN_SERVER_ERROR, str(exc))
    return _description(user, infos=[{"mechanism": MECHANISM_TYPES[m],
                                      "iterations": c.iterations} for m, c in found.items()])


def describe_user_scram_credentials(context: RequestContext, body: dict) -> dict:
    admin = context.services.admin
    names = [u["name"] for u in body.get("users") or ()]
    response = {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None,
                "results": []}
    try:
        if not names:
            for user in admin.users_with_config():
                found = _described(user, admin.user_config(user))
                if found is not None:
                    response["results"].append(found)
            return response
        for user in dict.fromkeys(names):
            if not user:
                response["results"].append(_description(user, ErrorCode.RESOURCE_NOT_FOUND,
                                                         _EMPTY_USER))
            elif names.count(user) > 1:
                response["results"].append(_description(
                    user, ErrorCode.DUPLICATE_RESOURCE,
                    f"Cannot describe SCRAM credentials for the same user twice in a single "
                    f"request: {user}"))
            else:
                found = _described(user, admin.user_config(user))
                response["results"].append(found or _description(
                    user, ErrorCode.RESOURCE_NOT_FOUND,
                    f"Attempt to describe a user credential that does not exist: {user}"))
    except ZooKeeperError as exc:
        response.update(results=[], error_code=error_code_for(exc), error_message=str(exc))
    return response


def _refusal(upsertion: dict | None, deletion: dict | None) -> tuple[ErrorCode, str] | None:
    """Why one alteration is refused on its own (Kafka's illegal upsertions and deletions)."""
    item = upsertion or deletion
    if item is None:
        raise ValueError("an alteration is an upsertion or a deletion")
    if not item["name"]:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, _EMPTY_USER
    if item["mechanism"] not in MECHANISM_NAMES:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, _UNKNOWN_MECHANISM
    if upsertion is not None:
        if upsertion["iterations"] > MAX_ITERATIONS:
            return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"
        if upsertion["iterations"] < MIN_ITERATIONS:
            return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"
    return None


def alter_user_scram_credentials(context: RequestContext, body: dict) -> dict:
    services = context.services
    deletions, upsertions = body["deletions"], body["upsertions"]
    if services.cluster.controller_id() != services.broker_id:
        users = sorted({a["name"] for a in (*deletions, *upsertions)})
        return {"throttle_time_ms": 0, "results": [
            _result(u, ErrorCode.NOT_CONTROLLER, ErrorCode.NOT_CONTROLLER.message)
            for u in users]}
    results: dict[str, dict] = {}
    for deletion in deletions:
        refused = _refusal(None, deletion)
        if refused:
            results.setdefault(deletion["name"], _result(deletion["name"], *refused))
    for upsertion in upsertions:
        refused = _refusal(upsertion, None)
        if refused:
            results[upsertion["name"]] = _result(upsertion["name"], *refused)
    pairs = [(a["name"], a["mechanism"]) for a in (*upsertions, *deletions)
             if a["name"] not in results]
    for name, _ in {p for p in pairs if pairs.count(p) > 1}:
        results[name] = _result(name, ErrorCode.DUPLICATE_RESOURCE,
                                "A user credential cannot be altered twice in the same request")
    for user in dict.fromkeys(name for name, _ in pairs if name not in results):
        results[user] = _alter(services.admin, user,
                               [d for d in deletions if d["name"] == user],
                               [u for u in upsertions if u["name"] == user])
    return {"throttle_time_ms": 0, "results": list(results.values())}


def _alter(admin, user: str, deletions: list[dict], upsertions: list[dict]) -> dict:
    """Apply one user's valid alterations to its config in ZooKeeper."""
    try:
        config = admin.user_config(user)
        if any(MECHANISM_NAMES[d["mechanism"]] not in config for d in deletions):
            return _result(user, ErrorCode.RESOURCE_NOT_FOUND,
                           "Attempt to delete a user credential that does not exist")
        for deletion in deletions:
            del config[MECHANISM_NAMES[deletion["mechanism"]]]
        for upsertion in upsertions:
            mechanism = MECHANISM_NAMES[upsertion["mechanism"]]
            config[mechanism] = ScramCredential.from_salted_password(
                mechanism, bytes(upsertion["salted_password"]), bytes(upsertion["salt"]),
                upsertion["iterations"]).to_text()
        admin.alter_user_config(user, config)
    except ZooKeeperError as exc:
        code = error_code_for(exc)
        return _result(user, code, code.message)
    return _result(user)

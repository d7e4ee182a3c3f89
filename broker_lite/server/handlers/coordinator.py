"""FindCoordinator, until this broker hosts a group coordinator: every key is answered with
COORDINATOR_NOT_AVAILABLE, which clients treat as retriable, so a consumer that only assigns
partitions (no group membership, no commits) keeps fetching undisturbed."""

from broker_lite.protocol import ErrorCode

MESSAGE = "this broker does not host a group coordinator"


def find_coordinator(context, body: dict) -> dict:
    if context.version >= 4:
        return {"throttle_time_ms": 0, "coordinators": [
            {"key": key, "node_id": -1, "host": "", "port": -1,
             "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE, "error_message": MESSAGE}
            for key in body["coordinator_keys"]
        ]}
    return {"throttle_time_ms": 0, "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE,
            "error_message": MESSAGE, "node_id": -1, "host": "", "port": -1}

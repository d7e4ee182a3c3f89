"""ApiVersions: the versions of every API this broker serves."""


def handle(context, body: dict) -> dict:
    return {"error_code": 0, "api_keys": context.services.api_versions, "throttle_time_ms": 0}

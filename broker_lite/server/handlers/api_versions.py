"""ApiVersions: the versions of every API this broker serves, and from version 3 on its feature
levels (:mod:`..features`)."""

from ..features import api_versions_fields


def handle(context, body: dict) -> dict:
    return {"error_code": 0, "api_keys": context.services.api_versions, "throttle_time_ms": 0,
            **api_versions_fields(context.services.features, context.version)}

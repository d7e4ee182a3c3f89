"""ApiVersions (key 18): the versions of each API the broker speaks.

A client sends it first, before it knows what the broker supports, which is why its response
always travels with response header v0 (see :mod:`..framing`).
"""

from ..schema import BOOL, INT16, INT32, INT64, STRING, A, F, Request, Response

API_VERSIONS_REQUEST = Request("ApiVersionsRequest", 18, "0-4", "3+", [
    F("ClientSoftwareName", STRING, "3+", ignorable=True),
    F("ClientSoftwareVersion", STRING, "3+", ignorable=True),
])

API_VERSIONS_RESPONSE = Response("ApiVersionsResponse", 18, "0-4", "3+", [
    F("ErrorCode", INT16, "0+"),
    A("ApiKeys", "ApiVersion", "0+", [
        F("ApiKey", INT16, "0+"),
        F("MinVersion", INT16, "0+"),
        F("MaxVersion", INT16, "0+"),
    ]),
    F("ThrottleTimeMs", INT32, "1+", ignorable=True),
    A("SupportedFeatures", "SupportedFeatureKey", "3+", [
        F("Name", STRING, "3+"),
        F("MinVersion", INT16, "3+"),
        F("MaxVersion", INT16, "3+"),
    ], ignorable=True, tag=0, tagged="3+"),
    F("FinalizedFeaturesEpoch", INT64, "3+", default=-1, ignorable=True, tag=1, tagged="3+"),
    A("FinalizedFeatures", "FinalizedFeatureKey", "3+", [
        F("Name", STRING, "3+"),
        F("MaxVersionLevel", INT16, "3+"),
        F("MinVersionLevel", INT16, "3+"),
    ], ignorable=True, tag=2, tagged="3+"),
    F("ZkMigrationReady", BOOL, "3+", ignorable=True, tag=3, tagged="3+"),
])


__all__ = [
    "API_VERSIONS_REQUEST",
    "API_VERSIONS_RESPONSE",
]

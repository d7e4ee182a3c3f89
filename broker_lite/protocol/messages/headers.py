"""Request and response headers.

Request header v0 has no client id (only ControlledShutdown v0 used it); v1 adds the client id;
v2 adds a tagged-fields section and is used for flexible request versions. The client id stays
a classic int16-length string even in v2, so that a broker can read the header of any request
before it knows the API. Response header v1 adds a tagged-fields section to v0.
"""

from ..schema import INT16, INT32, STRING, F, Header

REQUEST_HEADER = Header("RequestHeader", "0-2", "2+", [
    F("RequestApiKey", INT16, "0+"),
    F("RequestApiVersion", INT16, "0+"),
    F("CorrelationId", INT32, "0+"),
    F("ClientId", STRING, "1+", nullable="1+", ignorable=True, flexible="none"),
])

RESPONSE_HEADER = Header("ResponseHeader", "0-1", "1+", [
    F("CorrelationId", INT32, "0+"),
])


__all__ = [
    "REQUEST_HEADER",
    "RESPONSE_HEADER",
]

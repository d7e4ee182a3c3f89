"""Kafka's wire protocol, sans I/O: primitive types, declarative API schemas, error codes.

Bytes in, dicts out, and the reverse; the network layer (:mod:`broker_lite.server`) is a thin
shell around these functions:

* :func:`parse_request_header` / :func:`parse_request` -- a request frame (without its size) to a
  :class:`RequestHeader` and a body dict;
* :func:`encode_response` -- a body dict to the chunks of a response frame (size included);
* :func:`encode_request` / :func:`parse_response` -- the client side, for clients and tests.

Bodies are dicts keyed by the snake_case names of the fields of Kafka's message specs, declared
as data in :mod:`.schema` and decoded and encoded by :mod:`.codec`; :data:`API_SCHEMAS` holds
the request and response schema of every API known here, :class:`ErrorCode` Kafka's error codes.
Errors in Python are :class:`ProtocolError` subclasses.
"""

from broker_lite.common.lazy_exports import lazy_exports

# Each name is imported from its module when first asked for
# (:mod:`broker_lite.common.lazy_exports`): a process that needs only the error codes (stating a
# Spark source's schema, say) loads no codec.
__getattr__, __dir__ = lazy_exports(__name__, {
    ".apis": ("API_SCHEMAS", "Api", "ApiKey", "api_for"),
    ".codec": ("decode", "encode"),
    ".errors": ("EncodeError", "ErrorCode", "InvalidRequestError", "ProtocolError",
                "UnknownApiError", "UnsupportedVersionError"),
    ".framing": ("RequestHeader", "alike_requests", "encode_request", "encode_request_parts",
                 "encode_response",
                 "parse_request", "parse_request_header", "parse_response", "read_request_body",
                 "request_header_version", "response_header_version"),
    ".schema": ("Message", "snake_case"),
    ".types": ("ZERO_UUID", "Reader", "Writer"),
})

__all__ = [
    "API_SCHEMAS",
    "ZERO_UUID",
    "Api",
    "ApiKey",
    "EncodeError",
    "ErrorCode",
    "InvalidRequestError",
    "Message",
    "ProtocolError",
    "Reader",
    "RequestHeader",
    "UnknownApiError",
    "UnsupportedVersionError",
    "Writer",
    "alike_requests",
    "api_for",
    "decode",
    "encode",
    "encode_request",
    "encode_request_parts",
    "encode_response",
    "parse_request",
    "parse_request_header",
    "parse_response",
    "read_request_body",
    "request_header_version",
    "response_header_version",
    "snake_case",
]

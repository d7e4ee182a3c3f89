"""Turning request payloads into responses: parse, check the version, handle, encode.

A request for an API or version the broker does not serve closes the connection, as Kafka does,
with one exception kept for compatibility: ApiVersions in a version the broker does not know is
answered in version 0 with UNSUPPORTED_VERSION and the list of supported versions, so any client
can find a version both sides speak.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass

from broker_lite.protocol import (
    ApiKey,
    ErrorCode,
    InvalidRequestError,
    ProtocolError,
    Reader,
    RequestHeader,
    UnknownApiError,
    UnsupportedVersionError,
    api_for,
    decode,
    encode_response,
    parse_request_header,
)

from .network import CloseConnection, Connection
from .services import HandlerServices

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ApiHandler:
    """The versions of an API this broker serves, and the function serving them:
    ``handle(context, body) -> response body`` (None: send no response)."""

    min_version: int
    max_version: int
    handle: Callable[["RequestContext", dict], dict | None]


@dataclass(frozen=True)
class RequestContext:
    """A request as its handler sees it: the header, the broker's services, and the client's
    address (``/host``, as Kafka shows it in DescribeGroups; empty when unknown)."""

    header: RequestHeader
    services: HandlerServices
    client_host: str = ""

    @property
    def version(self) -> int:
        return self.header.api_version


def supported_versions(handlers: dict[ApiKey, ApiHandler]) -> list[dict]:
    """The APIs and versions ``handlers`` serve, as ApiVersions lists them."""
    return [{"api_key": int(key), "min_version": h.min_version, "max_version": h.max_version}
            for key, h in sorted(handlers.items())]


class Dispatcher:
    def __init__(self, handlers: dict[ApiKey, ApiHandler], services: HandlerServices):
        self.handlers = handlers
        self.services = services

    def __call__(self, payload: memoryview, connection: Connection):
        try:
            header, body_offset = parse_request_header(payload)
        except UnsupportedVersionError as exc:
            if exc.api_key == ApiKey.API_VERSIONS:
                return self._unsupported_api_versions(exc.correlation_id)
            raise CloseConnection(f"unsupported version {exc.version} of API {exc.api_key}")
        except (UnknownApiError, InvalidRequestError, ProtocolError) as exc:
            raise CloseConnection(f"unreadable request: {exc}") from None
        handler = self.handlers.get(header.api_key)
        if handler is None:
            raise CloseConnection(f"API {header.api_key} is not served by this broker")
        if not handler.min_version <= header.api_version <= handler.max_version:
            if header.api_key == ApiKey.API_VERSIONS:
                return self._unsupported_api_versions(header.correlation_id)
            raise CloseConnection(f"version {header.api_version} of API {header.api_key} "
                                  f"is not served ({handler.min_version}-{handler.max_version})")
        try:
            body = decode(api_for(header.api_key).request, header.api_version,
                          Reader(payload, body_offset))
        except ProtocolError as exc:
            raise CloseConnection(f"malformed {ApiKey(header.api_key).name} request: {exc}") \
                from None
        peer = connection.peer
        context = RequestContext(header, self.services, f"/{peer[0]}" if peer else "")
        response = handler.handle(context, body)
        if response is None:
            return None
        return encode_response(header.api_key, header.api_version, header.correlation_id,
                               response)

    def _unsupported_api_versions(self, correlation_id: int):
        body = {"error_code": ErrorCode.UNSUPPORTED_VERSION,
                "api_keys": supported_versions(self.handlers)}
        return encode_response(ApiKey.API_VERSIONS, 0, correlation_id, body)

"""Turning requests into responses: parse, check the version, handle, encode.

A request handler thread calls the :class:`Dispatcher` with each request. An API's handler has
the signature ``handle(context, body)`` and returns one of:

- the response body (a dict): encoded at the request's version and sent;
- ``None``: no response is sent (Produce with acks=0), and the connection reads its next request;
- :data:`RESPONDS_LATER`: the handler arranged for the answer to come later, and the handler
  thread moves on. The answer is then given exactly once, from whatever thread has it, with
  ``context.respond(body)`` (``None``: no response) or ``context.close_connection(reason)``.

Most waits are a :class:`DelayedResponse`: a delayed operation (:mod:`.purgatory`) bound to the
request, whose completion sends ``response()``, or closes the connection when ``response()``
raises :class:`CloseConnection`::

    operation = DelayedFetch(context, ...)            # a DelayedResponse
    services.purgatory.fetch.try_complete_else_watch(operation, partitions)
    return RESPONDS_LATER

The connection stays muted meanwhile (its next request is not read), so responses keep their
order.

A request for an API or version the broker does not serve closes the connection, as Kafka does,
with one exception kept for compatibility: ApiVersions in a version the broker does not know is
answered in version 0 with UNSUPPORTED_VERSION and the list of supported versions, so any client
can find a version both sides speak.
"""

import logging
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Protocol

from broker_lite.protocol import (
    ApiKey,
    ErrorCode,
    InvalidRequestError,
    ProtocolError,
    Reader,
    RequestHeader,
    UnknownApiError,
    UnsupportedVersionError,
    alike_requests,
    api_for,
    decode,
    encode_response,
    parse_request_header,
    read_request_body,
)
from broker_lite.protocol.enums import AclOperation, ResourceType
from broker_lite.security.acl import CLUSTER_NAME
from broker_lite.security.principal import ANONYMOUS

from . import authorization
from .network import RESPONDS_LATER, CloseConnection, Request
from .purgatory import DelayedOperation
from .services import HandlerServices

logger = logging.getLogger(__name__)

__all__ = ["RESPONDS_LATER", "ApiHandler", "DelayedResponse", "Dispatcher", "RequestContext",
           "Responder", "supported_versions"]


@dataclass(frozen=True)
class ApiHandler:
    """The versions of an API this broker serves, and the function serving them:
    ``handle(context, body) -> response body | None | RESPONDS_LATER``.

    An API whose requests are worth answering several at a time (Produce) also gives
    ``handle_run(contexts, bodies) -> response bodies | RESPONDS_LATER``, for requests one
    connection sent together, each answered as ``handle`` would in turn (later: the first
    context's ``respond`` takes the list of bodies); ``run_key(body)`` says which requests may
    be answered together: those with the same key, not None (see :class:`Dispatcher`)."""

    min_version: int
    max_version: int
    handle: Callable[["RequestContext", dict], object]
    handle_run: Callable[[list["RequestContext"], list[dict]], object] | None = None
    run_key: Callable[[dict], Hashable] | None = None


class Responder(Protocol):
    """How a request is answered later (see the module docstring)."""

    def respond(self, body: dict | None) -> None: ...

    def close_connection(self, reason: str) -> None: ...


@dataclass(frozen=True)
class RequestContext:
    """A request as its handler sees it: the header, the broker's services, the client's
    address (``/host``, as Kafka shows it in DescribeGroups; empty when unknown), the way
    to answer it later, the listener it came in on (Metadata answers with that listener's
    endpoints) and who sent it (the connection's principal: ``User:alice``;
    ``User:ANONYMOUS`` when nobody authenticated), which the ``authorize`` methods ask the
    authorizer about (:mod:`.authorization`)."""

    header: RequestHeader
    services: HandlerServices
    client_host: str = ""
    responder: Responder | None = None
    listener: str | None = None  # None: the broker's first listener
    principal: str = ANONYMOUS

    @property
    def version(self) -> int:
        return self.header.api_version

    @property
    def client_address(self) -> str:
        """The client's address, as ACL hosts name it (``10.0.0.7``)."""
        return self.client_host.removeprefix("/")

    def authorize(self, operation: AclOperation, resource_type: ResourceType,
                  name: str = CLUSTER_NAME, *, log_denied: bool = True) -> bool:
        """Whether the principal may do ``operation`` on the resource (default: the cluster)."""
        return authorization.authorize(self, operation, resource_type, name,
                                       log_denied=log_denied)

    def authorized_names(self, operation: AclOperation, resource_type: ResourceType,
                         names, *, log_denied: bool = True) -> set[str]:
        """Those of ``names`` the principal may do ``operation`` on."""
        return authorization.authorized_names(self, operation, resource_type, names,
                                              log_denied=log_denied)

    def authorized_operations(self, resource_type: ResourceType,
                              name: str = CLUSTER_NAME) -> int:
        """What the principal may do on the resource, as KIP-430's bit field."""
        return authorization.authorized_operations(self, resource_type, name)

    def respond(self, body: dict | None) -> None:
        """Answer the request now, from any thread (after the handler returned
        :data:`RESPONDS_LATER`): ``body`` at the request's version, or no response."""
        assert self.responder is not None, "this request cannot be answered later"
        self.responder.respond(body)

    def close_connection(self, reason: str) -> None:
        """Close the connection instead of answering."""
        assert self.responder is not None, "this request cannot be answered later"
        self.responder.close_connection(reason)


class DelayedResponse(DelayedOperation):
    """A delayed operation that answers its request when it completes: subclasses give
    ``try_complete`` (see :class:`~.purgatory.DelayedOperation`) and :meth:`response`."""

    def __init__(self, context: RequestContext, delay_ms: float | None):
        super().__init__(delay_ms)
        self.context = context

    def response(self) -> dict | None:
        """The response body to send now that the operation is complete; raise
        :class:`CloseConnection` to close the connection instead."""
        raise NotImplementedError

    def on_complete(self) -> None:
        try:
            body = self.response()
        except CloseConnection as exc:
            self.context.close_connection(str(exc))
        else:
            self.context.respond(body)


def supported_versions(handlers: dict[ApiKey, ApiHandler]) -> list[dict]:
    """The APIs and versions ``handlers`` serve, as ApiVersions lists them."""
    return [{"api_key": int(key), "min_version": h.min_version, "max_version": h.max_version}
            for key, h in sorted(handlers.items())]


class _NetworkResponder:
    """Answers a network request: encodes the body with the request's header."""

    __slots__ = ("request", "header")

    def __init__(self, request: Request, header: RequestHeader):
        self.request, self.header = request, header

    def respond(self, body: dict | None) -> None:
        if body is None:
            self.request.no_response()
            return
        header = self.header
        try:
            chunks = encode_response(header.api_key, header.api_version, header.correlation_id,
                                     body)
        except Exception:
            logger.exception("encoding the %s response failed", ApiKey(header.api_key).name)
            self.request.close_connection("unexpected error")
            return
        self.request.send_response(chunks)

    def close_connection(self, reason: str) -> None:
        self.request.close_connection(reason)


class _RunResponder(_NetworkResponder):
    """Answers the requests of a run (:meth:`Dispatcher._handle_run`) later: the list of their
    bodies, each encoded with its request's header, in one response."""

    __slots__ = ("headers",)

    def __init__(self, request: Request, headers: list[RequestHeader]):
        super().__init__(request, headers[0])
        self.headers = headers

    # A run's first context answers with the list of the run's bodies (ApiHandler.handle_run),
    # where the one request's responder takes one body: the signature says so.
    def respond(self, bodies: list[dict]) -> None:  # type: ignore[override]
        try:
            chunks = _encode_run(self.headers, bodies)
        except Exception:
            logger.exception("encoding the %s responses failed",
                             ApiKey(self.header.api_key).name)
            self.request.close_connection("unexpected error")
            return
        self.request.send_response(chunks)


def _encode_run(headers: list[RequestHeader], bodies: list[dict]) -> list:
    chunks = []
    for header, body in zip(headers, bodies, strict=True):
        chunks.extend(encode_response(header.api_key, header.api_version,
                                      header.correlation_id, body))
    return chunks


class Dispatcher:
    """The request handlers' handler: ``dispatcher(request)`` returns the response chunks,
    None or :data:`RESPONDS_LATER` (see :mod:`.network.request_handler`).

    A request of an API with ``handle_run`` takes along the requests its connection sent after
    it that are read already (:meth:`Request.following`: a producer pipelining Produce
    requests), :data:`MAX_RUN` at most, as long as they are of the same API, decode, and have
    its ``run_key``; they are answered together, now or later, their responses one after the
    other in one response. What stops the run (another API, another key, a request that does
    not decode) is left to come next, on its own."""

    MAX_RUN = 16

    def __init__(self, handlers: dict[ApiKey, ApiHandler], services: HandlerServices, *,
                 refusal_names_versions: bool = True):
        self.handlers = handlers
        self.services = services
        # An ApiVersions refusal lists the served ranges (Kafka 2.4+, KIP-511) or nothing
        # (a broker playing an older release, :mod:`.releases`).
        self.refusal_names_versions = refusal_names_versions

    def __call__(self, request: Request):
        peer = request.peer
        client_host = f"/{peer[0]}" if peer else ""
        return self._handle(request.payload, lambda header, responder=None: RequestContext(
            header, self.services, client_host,
            responder or _NetworkResponder(request, header), request.listener,
            request.principal), request)

    def api_versions(self, payload) -> tuple[list, bool]:
        """The answer to an ApiVersions request read before the client authenticated (a SASL
        listener's, as Kafka's ``apiVersionSupplier``), and whether it was a version served
        (an UNSUPPORTED_VERSION answer is not). Raises :class:`ProtocolError` for a request
        that does not decode."""
        try:
            header, body_offset = parse_request_header(payload)
        except UnsupportedVersionError as exc:
            return self._unsupported_api_versions(exc.correlation_id), False
        handler = self.handlers[ApiKey.API_VERSIONS]
        if not handler.min_version <= header.api_version <= handler.max_version:
            return self._unsupported_api_versions(header.correlation_id), False
        body = decode(api_for(header.api_key).request, header.api_version,
                      Reader(payload, body_offset))
        response = handler.handle(RequestContext(header, self.services), body)
        return encode_response(header.api_key, header.api_version, header.correlation_id,
                               response), True

    def _handle(self, payload, context_of: Callable[..., RequestContext],
                request: Request | None = None):
        try:
            header, body_offset = parse_request_header(payload)
        except UnsupportedVersionError as exc:
            if exc.api_key == ApiKey.API_VERSIONS:
                return self._unsupported_api_versions(exc.correlation_id)
            raise CloseConnection(
                f"unsupported version {exc.version} of API {exc.api_key}") from None
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
            body = read_request_body(header, Reader(payload, body_offset))
        except ProtocolError as exc:
            raise CloseConnection(f"malformed {ApiKey(header.api_key).name} request: {exc}") \
                from None
        handle_run, run_key = handler.handle_run, handler.run_key
        if handle_run is not None and run_key is not None and request is not None:
            key = run_key(body)
            run = self._run(request, handler, run_key, header, body_offset, body, key) \
                if key is not None else ()
            if len(run) > 1:
                return self._handle_run(request, handle_run, run, context_of)
        response = handler.handle(context_of(header), body)
        if response is None or response is RESPONDS_LATER:
            return response
        return encode_response(header.api_key, header.api_version, header.correlation_id,
                               response)

    def _run(self, request: Request, handler: ApiHandler, run_key: Callable[[dict], Hashable],
             header: RequestHeader, body_offset: int, body: dict, key: Hashable
             ) -> list[tuple[RequestHeader, dict]]:
        """``request`` and the requests following it that join its run, each decoded (those
        alike the first by comparing them with it: :func:`~broker_lite.protocol.alike_requests`;
        they join it)."""
        run = [(header, body)]
        payloads = request.following(self.MAX_RUN - 1)
        read_alike = alike_requests(request.payload, header, body_offset) if payloads else None
        for payload in payloads:
            alike = read_alike(payload) if read_alike is not None else None
            if alike is not None:
                run.append(alike)
                continue
            try:
                following, body_offset = parse_request_header(payload)
                if following.api_key != header.api_key or \
                        not handler.min_version <= following.api_version <= handler.max_version:
                    break
                body = read_request_body(following, Reader(payload, body_offset))
            except ProtocolError:  # answered on its own, as any request that does not decode
                break
            if run_key(body) != key:
                break
            run.append((following, body))
        return run

    def _handle_run(self, request: Request,
                    handle_run: Callable[[list[RequestContext], list[dict]], object],
                    run: list[tuple[RequestHeader, dict]],
                    context_of: Callable[..., RequestContext]) -> object:
        request.take_following(len(run) - 1)
        headers = [header for header, _ in run]
        first = context_of(headers[0], _RunResponder(request, headers))
        contexts = [first] + [  # answered with the first
            RequestContext(header, first.services, first.client_host, None, first.listener,
                           first.principal)
            for header in headers[1:]]
        responses = handle_run(contexts, [body for _, body in run])
        if not isinstance(responses, list):  # RESPONDS_LATER
            return responses
        return _encode_run(headers, responses)

    def _unsupported_api_versions(self, correlation_id: int):
        body = {"error_code": ErrorCode.UNSUPPORTED_VERSION,
                "api_keys": supported_versions(self.handlers)
                if self.refusal_names_versions else []}
        return encode_response(ApiKey.API_VERSIONS, 0, correlation_id, body)

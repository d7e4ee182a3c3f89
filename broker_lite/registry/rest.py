"""Confluent's REST API (v1): requests in, answers out, no sockets (the server is
:mod:`.server`).

Every route of Confluent's "Schema Registry API Reference" that clients use, one line each in
:data:`ROUTES`: the method, the path (``{subject}`` URL-decoded, ``{version}`` a number,
``latest`` or ``-1``, ``{id}`` a number), the operation of :class:`~.service.SchemaRegistryService`
and whether it writes. A write reaching a process that is not the primary is forwarded to the
primary (``forward``; see :mod:`.forwarding`), as Confluent's registry does.

Bodies are JSON in one of Confluent's content types
(``application/vnd.schemaregistry.v1+json``, ``application/vnd.schemaregistry+json``,
``application/json``; ``application/octet-stream`` and none are taken as JSON too, as Jersey
does); answers are ``application/vnd.schemaregistry.v1+json``. Errors are
``{"error_code": ..., "message": ...}`` with Confluent's codes (:mod:`.errors`).

>>> from broker_lite.registry.testing import memory_service
>>> api = RestApi(memory_service())
>>> answer = api.handle(Request("GET", "/schemas/types"))
>>> answer.status, json.loads(answer.body)
(200, ['JSON', 'PROTOBUF', 'AVRO'])
>>> answer = api.handle(Request("GET", "/subjects/nope/versions/latest"))
>>> answer.status, json.loads(answer.body)
(404, {'error_code': 40401, 'message': "Subject 'nope' not found."})
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote

from .errors import (
    BadRequest,
    MethodNotAllowed,
    NotFound,
    RegistryError,
    SchemaNotFound,
    UnsupportedMediaType,
)
from .service import SchemaRegistryService, parse_version

logger = logging.getLogger(__name__)

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
ACCEPTED_BODIES = ("application/vnd.schemaregistry.v1+json",
                   "application/vnd.schemaregistry+json", "application/json",
                   "application/octet-stream")


@dataclass
class Request:
    method: str
    path: str
    query: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == lowered), None)


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str = CONTENT_TYPE
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, value: Any, status: int = 200) -> Response:
        return cls(status, json.dumps(value, separators=(",", ":"),
                                      ensure_ascii=False).encode("utf-8"))

    @classmethod
    def error(cls, error: RegistryError) -> Response:
        return cls.json(error.body(), error.status)


class Call:
    """What a route's operation gets: the path's parts, the query, the JSON body."""

    def __init__(self, params: dict[str, str], query: dict[str, list[str]], request: Request):
        self.params = params
        self.query = query
        self.request = request

    def flag(self, name: str) -> bool:
        return self.query.get(name, ["false"])[-1].lower() == "true"

    def text(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else None

    def id(self) -> int:
        try:
            return int(self.params["id"])
        except ValueError:
            raise SchemaNotFound(f"Schema {self.params['id']} not found") from None

    def version(self) -> int:
        return parse_version(self.params["version"])

    @property
    def subject(self) -> str:
        return self.params["subject"]

    def body(self) -> Any:
        content_type = (self.request.header("Content-Type") or "").split(";")[0].strip()
        if content_type and content_type.lower() not in ACCEPTED_BODIES:
            raise UnsupportedMediaType("HTTP 415 Unsupported Media Type")
        try:
            return json.loads(self.request.body or b"null")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BadRequest(f"Unexpected character in the JSON body: {exc}") from None


Operation = Callable[[SchemaRegistryService, Call], Any]


def _route(method: str, pattern: str, operation: Operation, writes: bool = False
           ) -> tuple[str, re.Pattern[str], Operation, bool]:
    regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", pattern)
    return method, re.compile(f"^{regex}/?$"), operation, writes


def _deleted(call: Call) -> bool:
    return call.flag("deleted")


#: (method, path, operation, writes): Confluent's API reference, in its order.
ROUTES = [
    _route("GET", "/schemas/types", lambda s, c: s.schema_types()),
    _route("GET", "/schemas/ids/{id}",
           lambda s, c: s.schema_by_id(c.id(), c.text("format"))),
    _route("GET", "/schemas/ids/{id}/schema",
           lambda s, c: _raw(s.schema_by_id(c.id(), c.text("format"))["schema"])),
    _route("GET", "/schemas/ids/{id}/subjects",
           lambda s, c: s.subjects_of_id(c.id(), _deleted(c))),
    _route("GET", "/schemas/ids/{id}/versions",
           lambda s, c: s.versions_of_id(c.id(), _deleted(c))),
    _route("GET", "/subjects",
           lambda s, c: s.subjects(_deleted(c), c.text("subjectPrefix") or "")),
    _route("GET", "/subjects/{subject}/versions",
           lambda s, c: s.versions(c.subject, _deleted(c))),
    _route("GET", "/subjects/{subject}/versions/{version}",
           lambda s, c: s.get_version(c.subject, c.version(), _deleted(c), c.text("format"))),
    _route("GET", "/subjects/{subject}/versions/{version}/schema",
           lambda s, c: _raw(s.get_version(c.subject, c.version(), _deleted(c),
                                           c.text("format"))["schema"])),
    _route("GET", "/subjects/{subject}/versions/{version}/referencedby",
           lambda s, c: s.referenced_by(c.subject, c.version())),
    _route("POST", "/subjects/{subject}/versions",
           lambda s, c: s.register(c.subject, c.body(), c.flag("normalize")), writes=True),
    _route("POST", "/subjects/{subject}",
           lambda s, c: s.lookup(c.subject, c.body(), c.flag("normalize"), _deleted(c))),
    _route("DELETE", "/subjects/{subject}",
           lambda s, c: s.delete_subject(c.subject, c.flag("permanent")), writes=True),
    _route("DELETE", "/subjects/{subject}/versions/{version}",
           lambda s, c: s.delete_version(c.subject, c.version(), c.flag("permanent")),
           writes=True),
    _route("POST", "/compatibility/subjects/{subject}/versions/{version}",
           lambda s, c: s.test_compatibility(c.subject, c.version(), c.body(),
                                             c.flag("normalize"), c.flag("verbose"))),
    _route("POST", "/compatibility/subjects/{subject}/versions",
           lambda s, c: s.test_compatibility(c.subject, None, c.body(), c.flag("normalize"),
                                             c.flag("verbose"))),
    _route("GET", "/config", lambda s, c: s.get_config(None)),
    _route("PUT", "/config", lambda s, c: s.set_config(None, c.body()), writes=True),
    _route("DELETE", "/config", lambda s, c: s.delete_config(None), writes=True),
    _route("GET", "/config/{subject}",
           lambda s, c: s.get_config(c.subject, c.flag("defaultToGlobal"))),
    _route("PUT", "/config/{subject}", lambda s, c: s.set_config(c.subject, c.body()),
           writes=True),
    _route("DELETE", "/config/{subject}", lambda s, c: s.delete_config(c.subject),
           writes=True),
    _route("GET", "/mode", lambda s, c: s.get_mode(None)),
    _route("PUT", "/mode", lambda s, c: s.set_mode(None, c.body(), c.flag("force")),
           writes=True),
    _route("GET", "/mode/{subject}",
           lambda s, c: s.get_mode(c.subject, c.flag("defaultToGlobal"))),
    _route("PUT", "/mode/{subject}",
           lambda s, c: s.set_mode(c.subject, c.body(), c.flag("force")), writes=True),
    _route("DELETE", "/mode/{subject}", lambda s, c: s.delete_mode(c.subject), writes=True),
    _route("GET", "/", lambda s, c: {}),
]


class _Raw:
    """An answer sent as the text itself (``/schema`` endpoints), not as a JSON string."""

    def __init__(self, text: str):
        self.text = text


def _raw(text: str) -> _Raw:
    return _Raw(text)


Forward = Callable[[Request], "Response | None"]


class RestApi:
    """The REST API over ``service``; ``forward`` takes a write this process must not make
    (it returns the primary's answer), or returns None when this process is the primary."""

    def __init__(self, service: SchemaRegistryService, forward: Forward | None = None):
        self.service = service
        self.forward = forward

    def handle(self, request: Request) -> Response:
        try:
            return self._handle(request)
        except RegistryError as error:
            return Response.error(error)
        except Exception:  # an answer for the client, the trace for the log
            logger.exception("%s %s failed", request.method, request.path)
            return Response.error(RegistryError("Internal Server Error"))

    def _handle(self, request: Request) -> Response:
        path = request.path.split("?", 1)[0]
        allowed = False
        for method, pattern, operation, writes in ROUTES:
            match = pattern.match(path)
            if match is None:
                continue
            allowed = True
            if method != request.method:
                continue
            if writes and self.forward is not None:
                forwarded = self.forward(request)
                if forwarded is not None:
                    return forwarded
            params = {k: unquote(v) for k, v in match.groupdict().items()}
            call = Call(params, parse_qs(request.query, keep_blank_values=True), request)
            result = operation(self.service, call)
            if isinstance(result, _Raw):
                return Response(200, result.text.encode("utf-8"))
            return Response.json(result)
        if allowed:
            raise MethodNotAllowed("HTTP 405 Method Not Allowed")
        raise NotFound("HTTP 404 Not Found")


__all__ = ["ROUTES", "Request", "Response", "RestApi"]

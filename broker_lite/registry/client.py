"""A client of a schema registry's REST API (Confluent's v1), for the tools and for Spark.

Any registry that speaks Confluent's API will do (broker_lite's, Confluent's, Karapace). The
settings are confluent-kafka's ``SchemaRegistryClient`` names:

=============================  ================================================================
``url``                        the registry (``http`` or ``https``; the first of a comma list)
``basic.auth.user.info``       ``user:password`` for HTTP Basic authentication
``basic.auth.credentials.source``  ``USER_INFO`` (the default) or ``URL`` (``https://user:pw@host``)
``ssl.ca.location``            a PEM file of the authorities trusted for an https registry
``ssl.certificate.location``   a client certificate (PEM), with ``ssl.key.location``
``ssl.key.location``           its key
``timeout``                    seconds a request may take (default 30)
``max.retries``                attempts after the first at a request that did not reach the
                               registry or got a 5xx answer (default 3)
``retries.wait.ms``            the first wait before a retry, doubled each time (default 1000),
``retries.max.wait.ms``        up to this (default 20000)
=============================  ================================================================

A refusal is a :class:`RegistryRequestError` with the registry's ``error_code`` and message; a
registry that cannot be reached, after the retries, one with ``error_code`` -1 naming the URL.
No password reaches a message: the URL is named without its user information.
"""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, unquote, urlencode, urlsplit

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
TIMEOUT_S = 30.0

#: confluent-kafka's names of the settings this client takes
SETTINGS = ("url", "basic.auth.user.info", "basic.auth.credentials.source", "ssl.ca.location",
            "ssl.certificate.location", "ssl.key.location", "timeout", "max.retries",
            "retries.wait.ms", "retries.max.wait.ms")


class RegistryRequestError(Exception):
    """A request the registry refused (``status``, ``error_code``) or that did not reach it."""

    def __init__(self, message: str, status: int = -1, error_code: int = -1):
        super().__init__(message)
        self.status = status
        self.error_code = error_code

    @property
    def unreachable(self) -> bool:
        return self.status == -1


def _number(settings: Mapping[str, str], name: str, default: float) -> float:
    value = settings.get(name)
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except ValueError:
        raise RegistryRequestError(f"{name}: {value!r} is not a number") from None
    if number < 0:
        raise RegistryRequestError(f"{name}: {value!r} is negative")
    return number


class RegistryClient:
    """Confluent's REST API at ``settings["url"]``; see the module docstring."""

    def __init__(self, settings: Mapping[str, str]):
        url = settings.get("url") or settings.get("schema.registry.url")
        if not url:
            raise RegistryRequestError("no schema registry URL (schema.registry.url)")
        parts = urlsplit(url.split(",")[0].strip().rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise RegistryRequestError(f"not a schema registry URL: {_without_user(url)!r}")
        self.parts = parts
        #: the registry's URL as messages name it (without user information)
        self.url = _without_user(parts.geturl())
        self.headers = {"Accept": CONTENT_TYPE}
        source = (settings.get("basic.auth.credentials.source") or "USER_INFO").upper()
        if source not in ("USER_INFO", "URL", "SASL_INHERIT"):
            raise RegistryRequestError(f"basic.auth.credentials.source: {source!r} is none of "
                                       "USER_INFO, URL")
        user_info = settings.get("basic.auth.user.info") if source == "USER_INFO" else (
            f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
            if parts.username else None)
        if user_info:
            self.headers["Authorization"] = "Basic " + base64.b64encode(
                user_info.encode()).decode()
        self.tls: ssl.SSLContext | None = None
        if parts.scheme == "https":
            try:
                self.tls = ssl.create_default_context(cafile=settings.get("ssl.ca.location"))
                if settings.get("ssl.certificate.location"):
                    self.tls.load_cert_chain(settings["ssl.certificate.location"],
                                             settings.get("ssl.key.location"))
            except (OSError, ssl.SSLError) as exc:
                raise RegistryRequestError(f"the TLS settings of the schema registry client "
                                           f"(ssl.*): {exc}") from None
        self.timeout = _number(settings, "timeout", TIMEOUT_S)
        self.retries = int(_number(settings, "max.retries", 3))
        self.retry_wait = _number(settings, "retries.wait.ms", 1000) / 1000
        self.retry_max_wait = _number(settings, "retries.max.wait.ms", 20000) / 1000
        self._ids: dict[tuple[int, str | None], dict[str, Any]] = {}

    def request(self, method: str, path: str, body: Any = None,
                query: Mapping[str, Any] | None = None) -> Any:
        """One call of the API, retried (``max.retries``) while the registry cannot be reached
        or answers 5xx."""
        wait = self.retry_wait
        for attempt in range(self.retries + 1):
            try:
                return self._request(method, path, body, query)
            except RegistryRequestError as exc:
                if attempt == self.retries or not (exc.unreachable or exc.status >= 500):
                    if exc.unreachable and self.retries:
                        raise RegistryRequestError(
                            f"{exc} (after {self.retries + 1} attempts)") from None
                    raise
            time.sleep(wait)
            wait = min(wait * 2, self.retry_max_wait)
        raise AssertionError("unreachable")

    def _request(self, method: str, path: str, body: Any, query: Mapping[str, Any] | None
                 ) -> Any:
        target = (self.parts.path or "") + path + (f"?{urlencode(query)}" if query else "")
        host = self.parts.hostname or ""
        port = self.parts.port or (443 if self.tls else 80)
        connection = http.client.HTTPSConnection(host, port, timeout=self.timeout,
                                                 context=self.tls) \
            if self.tls else http.client.HTTPConnection(host, port, timeout=self.timeout)
        headers = dict(self.headers)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = CONTENT_TYPE
        try:
            connection.request(method, target, body=data, headers=headers)
            answer = connection.getresponse()
            raw = answer.read()
        except (OSError, http.client.HTTPException) as exc:
            raise RegistryRequestError(f"cannot reach the schema registry at {self.url}: "
                                       f"{exc}") from None
        finally:
            connection.close()
        try:
            found = json.loads(raw) if raw else None
        except ValueError:
            found = raw.decode("utf-8", "replace")
        if answer.status >= 300:
            if isinstance(found, dict):
                raise RegistryRequestError(str(found.get("message")), answer.status,
                                           int(found.get("error_code", -1)))
            raise RegistryRequestError(f"HTTP {answer.status} from the schema registry at "
                                       f"{self.url}: {found}", answer.status)
        return found

    # -- the calls ------------------------------------------------------------------------------

    def register(self, subject: str, schema: str, schema_type: str = "AVRO",
                 references: list[dict[str, Any]] | None = None,
                 normalize: bool = False) -> dict[str, Any]:
        """``POST /subjects/{subject}/versions``: the schema's id (registered when new)."""
        return self._post_schema(f"/subjects/{quote(subject, '')}/versions", schema,
                                 schema_type, references, normalize)

    def lookup(self, subject: str, schema: str, schema_type: str = "AVRO",
               references: list[dict[str, Any]] | None = None,
               normalize: bool = False) -> dict[str, Any]:
        """``POST /subjects/{subject}``: the version of ``subject`` that is this schema."""
        return self._post_schema(f"/subjects/{quote(subject, '')}", schema, schema_type,
                                 references, normalize)

    def _post_schema(self, path: str, schema: str, schema_type: str,
                     references: list[dict[str, Any]] | None, normalize: bool
                     ) -> dict[str, Any]:
        body: dict[str, Any] = {"schema": schema, "schemaType": schema_type}
        if references:
            body["references"] = references
        result: dict[str, Any] = self.request("POST", path, body, query={
            "normalize": "true"} if normalize else None)
        return result

    def schema(self, schema_id: int, fmt: str | None = None) -> dict[str, Any]:
        """``GET /schemas/ids/{id}``, remembered."""
        key = (schema_id, fmt)
        if key not in self._ids:
            self._ids[key] = self.request("GET", f"/schemas/ids/{schema_id}",
                                          query={"format": fmt} if fmt else None)
        return self._ids[key]

    def version(self, subject: str, version: str | int = "latest",
                fmt: str | None = None) -> dict[str, Any]:
        """``GET /subjects/{subject}/versions/{version}``: subject, version, id, schema."""
        result: dict[str, Any] = self.request(
            "GET", f"/subjects/{quote(subject, '')}/versions/{version}",
            query={"format": fmt} if fmt else None)
        return result

    def versions(self, subject: str) -> list[int]:
        """``GET /subjects/{subject}/versions``."""
        return [int(v) for v in self.request("GET", f"/subjects/{quote(subject, '')}/versions")]

    def subjects(self) -> list[str]:
        """``GET /subjects``."""
        return list(self.request("GET", "/subjects"))


def _without_user(url: str) -> str:
    """``url`` without the ``user:password@`` of its network location."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return parts._replace(netloc=netloc).geturl()

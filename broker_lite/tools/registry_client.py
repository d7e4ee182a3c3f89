"""A client of a schema registry's REST API (Confluent's v1), for the tools.

Any registry that speaks Confluent's API will do (broker_lite's, Confluent's, Karapace). The
settings are confluent-kafka's names: ``url`` (``schema.registry.url``),
``basic.auth.user.info`` (``user:password``), ``ssl.ca.location`` (a PEM file of the
authorities trusted for an https registry), ``ssl.certificate.location`` and
``ssl.key.location`` (a client certificate). A refusal is a :class:`RegistryRequestError`
with the registry's ``error_code`` and message; a registry that cannot be reached one with
``error_code`` -1.
"""

from __future__ import annotations

import base64
import http.client
import json
import ssl
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
TIMEOUT_S = 30.0


class RegistryRequestError(Exception):
    """A request the registry refused (``status``, ``error_code``) or that did not reach it."""

    def __init__(self, message: str, status: int = -1, error_code: int = -1):
        super().__init__(message)
        self.status = status
        self.error_code = error_code


class RegistryClient:
    """Confluent's REST API at ``settings["url"]``; see the module docstring."""

    def __init__(self, settings: Mapping[str, str]):
        url = settings.get("url") or settings.get("schema.registry.url")
        if not url:
            raise RegistryRequestError("no schema registry URL (schema.registry.url)")
        self.url = url.split(",")[0].rstrip("/")
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise RegistryRequestError(f"not a schema registry URL: {self.url!r}")
        self.parts = parts
        self.headers = {"Accept": CONTENT_TYPE}
        user_info = settings.get("basic.auth.user.info")
        if user_info:
            self.headers["Authorization"] = "Basic " + base64.b64encode(
                user_info.encode()).decode()
        self.tls: ssl.SSLContext | None = None
        if parts.scheme == "https":
            self.tls = ssl.create_default_context(cafile=settings.get("ssl.ca.location"))
            if settings.get("ssl.certificate.location"):
                self.tls.load_cert_chain(settings["ssl.certificate.location"],
                                         settings.get("ssl.key.location"))
        self._ids: dict[tuple[int, str | None], dict[str, Any]] = {}

    def request(self, method: str, path: str, body: Any = None,
                query: Mapping[str, Any] | None = None) -> Any:
        target = path + (f"?{urlencode(query)}" if query else "")
        port = self.parts.port or (443 if self.tls else 80)
        connection = http.client.HTTPSConnection(self.parts.hostname or "", port,
                                                 timeout=TIMEOUT_S, context=self.tls) \
            if self.tls else http.client.HTTPConnection(self.parts.hostname or "", port,
                                                        timeout=TIMEOUT_S)
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
            raise RegistryRequestError(f"HTTP {answer.status}: {found}", answer.status)
        return found

    # -- the calls the tools make ---------------------------------------------------------------

    def register(self, subject: str, schema: str, schema_type: str = "AVRO",
                 references: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"schema": schema, "schemaType": schema_type}
        if references:
            body["references"] = references
        result: dict[str, Any] = self.request("POST", f"/subjects/{quote(subject, '')}/versions",
                                              body)
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
        result: dict[str, Any] = self.request(
            "GET", f"/subjects/{quote(subject, '')}/versions/{version}",
            query={"format": fmt} if fmt else None)
        return result

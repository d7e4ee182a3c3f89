"""Forwarding writes to the primary, as Confluent's registry does.

Only the primary (see :mod:`.election`) decides writes. Another process that gets a write
(register, delete, a config or mode change) sends the same request, body, content type and
``Authorization`` header to the primary's URL and answers with the primary's answer. Before
answering it reads ``_schemas`` up to its end, so the client's next read, here, sees its write.
A write that arrives while no primary is elected waits for one (``kafkastore.timeout.ms``);
then ``50004``. A primary that cannot be reached is ``50003``.

A forwarded request carries :data:`FORWARDED_HEADER`; a process that is not the primary either
refuses it (``50003``) rather than forwarding it again, so a request cannot go round in
circles while the group rebalances.
"""

from __future__ import annotations

import http.client
import logging
import ssl
from collections.abc import Callable
from urllib.parse import urlsplit

from .election import Identity, PrimaryElector
from .errors import ForwardingError, RegistryError, UnknownPrimary
from .rest import Request, Response

logger = logging.getLogger(__name__)

FORWARDED_HEADER = "X-Registry-Forwarded"
PASSED_HEADERS = ("Content-Type", "Accept", "Authorization")


class Forwarder:
    """``forward(request)``: None when this process is the primary (it handles the write), else
    the primary's answer."""

    def __init__(self, elector: PrimaryElector, catch_up: Callable[[], None],
                 timeout_s: float, tls: ssl.SSLContext | None = None):
        self.elector = elector
        self.catch_up = catch_up
        self.timeout_s = timeout_s
        self.tls = tls

    def __call__(self, request: Request) -> Response | None:
        primary = self.elector.primary() or self.elector.wait_for_primary(self.timeout_s)
        if self.elector.is_primary:
            return None
        if primary is None:
            raise UnknownPrimary("Error while forwarding the request: no primary registry is "
                                 "elected")
        if request.header(FORWARDED_HEADER):
            raise ForwardingError("Error while forwarding the request: the process it was "
                                  "forwarded to is not the primary")
        answer = self._send(primary, request)
        if answer.status < 300:
            self.catch_up()
        return answer

    def _send(self, primary: Identity, request: Request) -> Response:
        parts = urlsplit(primary.url)
        connection: http.client.HTTPConnection
        if parts.scheme == "https":
            connection = http.client.HTTPSConnection(primary.host, primary.port,
                                                     timeout=self.timeout_s,
                                                     context=self.tls)
        else:
            connection = http.client.HTTPConnection(primary.host, primary.port,
                                                    timeout=self.timeout_s)
        headers = {name: value for name in PASSED_HEADERS
                   if (value := request.header(name)) is not None}
        headers[FORWARDED_HEADER] = "1"
        target = request.path + (f"?{request.query}" if request.query else "")
        try:
            connection.request(request.method, target, body=request.body or None,
                               headers=headers)
            answer = connection.getresponse()
            body = answer.read()
            return Response(answer.status, body,
                            answer.getheader("Content-Type") or "application/json")
        except (OSError, http.client.HTTPException) as exc:
            logger.warning("forwarding %s %s to %s failed: %s", request.method, request.path,
                           primary.url, exc)
            raise ForwardingError(f"Error while forwarding the request to the primary "
                                  f"{primary.url}: {exc}") from None
        finally:
            connection.close()


__all__ = ["FORWARDED_HEADER", "Forwarder", "RegistryError"]

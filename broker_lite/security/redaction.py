"""Secrets hidden wherever settings are printed: logs, exception texts, query progress,
``explain()``, reprs. One function, :func:`redact`, serves every caller.

A setting is secret when its name (with or without Spark's ``kafka.`` prefix) is
``sasl.jaas.config`` (Spark's own Kafka connector redacts it too: Spark's default redaction
pattern does not match it), or contains ``password``, ``secret``, ``ssl.keystore.key``,
``ssl.key.pem``, ``token`` or ``credential``, or is a schema registry client's
``basic.auth.user.info`` (``user:password``); a URL's user information (``https://user:pw@host``)
is hidden in any setting named ``*url``. The private key ``ssl.keystore.key`` and inline
keys are secret; certificates (``ssl.truststore.certificates``,
``ssl.keystore.certificate.chain``) are public.

>>> redact({"kafka.bootstrap.servers": "b1:9092", "kafka.sasl.jaas.config": "x password=y;",
...         "kafka.ssl.key.password": "pw"})
{'kafka.bootstrap.servers': 'b1:9092', 'kafka.sasl.jaas.config': '*********(redacted)', \
'kafka.ssl.key.password': '*********(redacted)'}
"""

from __future__ import annotations

import re
from collections.abc import Mapping

REDACTED = "*********(redacted)"  # Spark's replacement text (spark.redaction.regex)
_SECRET = re.compile(r"(^|\.)(sasl\.jaas\.config|ssl\.keystore\.key|ssl\.key\.pem|user\.info)$"
                     r"|password|secret|token(?!\.endpoint)|credential", re.IGNORECASE)


def is_secret(name: str) -> bool:
    """Whether the setting or option ``name`` holds a secret.

    >>> is_secret("kafka.sasl.jaas.config"), is_secret("sasl.oauthbearer.token.endpoint.url")
    (True, False)
    """
    return bool(_SECRET.search(str(name)))


_URL_USER = re.compile(r"(?<=://)[^/@\s]*@")


def redact(settings: Mapping[str, object]) -> dict[str, object]:
    """A copy of ``settings`` with the values of secret settings replaced.

    >>> redact({"schema.registry.url": "https://etl:pw@registry:8081",
    ...         "schema.registry.basic.auth.user.info": "etl:pw"})
    {'schema.registry.url': 'https://*********(redacted)@registry:8081', \
'schema.registry.basic.auth.user.info': '*********(redacted)'}
    """
    return {name: REDACTED if is_secret(name) and value not in (None, "") else
            _URL_USER.sub(REDACTED + "@", value)
            if isinstance(value, str) and str(name).lower().endswith("url") else value
            for name, value in settings.items()}


class RedactedSettings(dict):
    """A dict of settings that prints with its secrets hidden (``repr``, ``str``, f-strings),
    so that objects holding settings (options dataclasses, say) never print them in clear.

    >>> RedactedSettings({"sasl.jaas.config": "... password=pw;"})
    {'sasl.jaas.config': '*********(redacted)'}
    """

    def __repr__(self) -> str:
        return repr(redact(self))

    __str__ = __repr__

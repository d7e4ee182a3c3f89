"""The exceptions of :mod:`broker_lite.security`.

Their texts never contain a secret (a password, a key, a token, a JAAS configuration): they
name the setting, the user or the step that failed, and the reason.
"""

from __future__ import annotations


class SecurityError(Exception):
    """Base class of every error raised by :mod:`broker_lite.security`."""


class SecurityConfigError(SecurityError, ValueError):
    """A TLS or SASL setting that cannot be used; ``key`` names the setting."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}")
        self.key = key


class JaasConfigError(SecurityConfigError):
    """``sasl.jaas.config`` that does not parse in Kafka's JAAS syntax (the text is not quoted
    in the message: it holds passwords)."""

    def __init__(self, message: str):
        super().__init__("sasl.jaas.config", message)


class SaslAuthenticationError(SecurityError):
    """A SASL exchange that failed: wrong credentials, an unknown user, a malformed or
    oversized message, a wrong nonce. On the wire this is Kafka's SASL_AUTHENTICATION_FAILED
    (58), or ILLEGAL_SASL_STATE (34) for ``illegal_state``."""

    def __init__(self, message: str, *, illegal_state: bool = False):
        super().__init__(message)
        self.illegal_state = illegal_state

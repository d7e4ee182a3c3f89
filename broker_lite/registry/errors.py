"""The registry's errors, as Confluent Schema Registry answers them.

Every failure of a request is a :class:`RegistryError`: an HTTP status and Confluent's
``error_code``, sent as ``{"error_code": ..., "message": ...}`` (Confluent's API reference,
"Errors"). The codes are Confluent's (``io.confluent.kafka.schemaregistry.rest.exceptions``);
a client that reads ``error_code`` (confluent-kafka's ``SchemaRegistryError.error_code``)
cannot tell this registry from Confluent's.

>>> error = SubjectNotFound("orders-value")
>>> error.status, error.error_code, error.message
(404, 40401, "Subject 'orders-value' not found.")
"""

from __future__ import annotations


class RegistryError(Exception):
    """A request refused or failed: ``status`` (HTTP), ``error_code`` (Confluent's),
    ``message`` (what the client reads)."""

    status = 500
    error_code = 50001

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def body(self) -> dict[str, object]:
        """The JSON body of the answer."""
        return {"error_code": self.error_code, "message": self.message}


class BadRequest(RegistryError):
    """Malformed JSON, or a request body of the wrong shape (Confluent's 400 / 400)."""

    status, error_code = 400, 400


class Unauthorized(RegistryError):
    """No or wrong credentials (401 / 401)."""

    status, error_code = 401, 401


class Forbidden(RegistryError):
    """Credentials right, role not allowed (403 / 403)."""

    status, error_code = 403, 403


class NotFound(RegistryError):
    """No such endpoint (404 / 404)."""

    status, error_code = 404, 404


class MethodNotAllowed(RegistryError):
    status, error_code = 405, 405


class NotAcceptable(RegistryError):
    status, error_code = 406, 406


class UnsupportedMediaType(RegistryError):
    """A request body whose Content-Type is none of the registry's (415 / 415)."""

    status, error_code = 415, 415


class UnprocessableEntity(RegistryError):
    """A well-formed JSON body that is not what the endpoint takes (422 / 422)."""

    status, error_code = 422, 422


class SubjectNotFound(RegistryError):
    status, error_code = 404, 40401

    def __init__(self, subject: str):
        super().__init__(f"Subject '{subject}' not found.")


class VersionNotFound(RegistryError):
    status, error_code = 404, 40402

    def __init__(self, subject: str | None = None, version: int | str | None = None):
        super().__init__("Version not found." if subject is None
                         else f"Version {version} not found.")


class SchemaNotFound(RegistryError):
    status, error_code = 404, 40403

    def __init__(self, message: str = "Schema not found"):
        super().__init__(message)


class SubjectSoftDeleted(RegistryError):
    status, error_code = 404, 40404

    def __init__(self, subject: str):
        super().__init__(f"Subject '{subject}' was soft deleted.Set permanent=true to delete "
                         "permanently")


class SubjectNotSoftDeleted(RegistryError):
    status, error_code = 404, 40405

    def __init__(self, subject: str):
        super().__init__(f"Subject '{subject}' was not deleted first before being permanently "
                         "deleted")


class VersionSoftDeleted(RegistryError):
    status, error_code = 404, 40406

    def __init__(self, subject: str, version: int):
        super().__init__(f"Subject '{subject}' Version {version} was soft deleted.Set "
                         "permanent=true to delete permanently")


class VersionNotSoftDeleted(RegistryError):
    status, error_code = 404, 40407

    def __init__(self, subject: str, version: int):
        super().__init__(f"Subject '{subject}' Version {version} was not deleted first before "
                         "being permanently deleted")


class SubjectLevelCompatibilityNotConfigured(RegistryError):
    status, error_code = 404, 40408

    def __init__(self, subject: str):
        super().__init__(f"Subject '{subject}' does not have subject-level compatibility "
                         "configured")


class SubjectLevelModeNotConfigured(RegistryError):
    status, error_code = 404, 40409

    def __init__(self, subject: str):
        super().__init__(f"Subject '{subject}' does not have subject-level mode configured")


class IncompatibleSchema(RegistryError):
    status, error_code = 409, 409


class InvalidSchema(RegistryError):
    status, error_code = 422, 42201


class InvalidVersion(RegistryError):
    status, error_code = 422, 42202

    def __init__(self, version: str):
        super().__init__(f"The specified version '{version}' is not a valid version id. "
                         "Allowed values are between [1, 2^31-1] and the string \"latest\"")


class InvalidCompatibilityLevel(RegistryError):
    status, error_code = 422, 42203

    def __init__(self, level: object):
        super().__init__(f"Invalid compatibility level. Valid values are none, backward, "
                         f"forward, full, backward_transitive, forward_transitive, and "
                         f"full_transitive (got {level!r})")


class InvalidMode(RegistryError):
    status, error_code = 422, 42204

    def __init__(self, mode: object):
        super().__init__(f"Invalid mode. Valid values are READWRITE, READONLY, IMPORT "
                         f"(got {mode!r})")


class OperationNotPermitted(RegistryError):
    status, error_code = 422, 42205


class ReferenceExists(RegistryError):
    status, error_code = 422, 42206


class StoreError(RegistryError):
    """The ``_schemas`` topic could not be written or read (50001)."""

    status, error_code = 500, 50001


class StoreTimeout(RegistryError):
    """A write was not read back from the topic in time (50002)."""

    status, error_code = 500, 50002


class ForwardingError(RegistryError):
    """The primary could not be reached to take a write (50003)."""

    status, error_code = 500, 50003


class UnknownPrimary(RegistryError):
    """No primary is elected, so no write can be taken (50004)."""

    status, error_code = 500, 50004

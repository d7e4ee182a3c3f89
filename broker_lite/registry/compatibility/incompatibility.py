"""An incompatibility: why a reader cannot read a writer's data."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Incompatibility:
    """Why a reader cannot read a writer's data: Confluent's error type (``TYPE_MISMATCH``,
    ``READER_FIELD_MISSING_DEFAULT_VALUE``, ...), where (a path in the reader), what."""

    error_type: str
    path: str
    description: str

    def message(self) -> str:
        """As Confluent's verbose answers write it."""
        return (f"{{errorType:'{self.error_type}', description:'{self.description}', "
                f"additionalInfo:'{self.path}'}}")

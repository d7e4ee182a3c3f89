"""Control records: the transaction markers that fill control batches (magic v2 only).

A control batch holds exactly one control record, which consumers never hand to applications::

    key   => version: int16 (0), type: int16 (0 = ABORT, 1 = COMMIT)
    value => version: int16 (0), coordinatorEpoch: int32      (for ABORT and COMMIT markers)

Types other than ABORT and COMMIT may appear in the future; readers keep their raw key and value.
"""

import enum
import struct
from dataclasses import dataclass

from .errors import CorruptRecordError

_KEY = struct.Struct(">hh")
_END_TXN_VALUE = struct.Struct(">hi")
CONTROL_KEY_VERSION = 0
END_TXN_MARKER_VERSION = 0


class ControlRecordType(enum.IntEnum):
    ABORT = 0
    COMMIT = 1


@dataclass(frozen=True, slots=True)
class EndTransactionMarker:
    """The control record that ends a transaction on one partition."""

    type: ControlRecordType
    coordinator_epoch: int

    def key(self) -> bytes:
        return _KEY.pack(CONTROL_KEY_VERSION, self.type)

    def value(self) -> bytes:
        return _END_TXN_VALUE.pack(END_TXN_MARKER_VERSION, self.coordinator_epoch)


def control_record_type(key: bytes | None) -> int:
    """The type field of a control record key (not necessarily a known
    :class:`ControlRecordType`)."""
    if key is None or len(key) < _KEY.size:
        raise CorruptRecordError(f"control record key must have at least {_KEY.size} bytes")
    _version, type_ = _KEY.unpack_from(key)
    return type_


def decode_end_transaction_marker(key: bytes | None, value: bytes | None) -> EndTransactionMarker:
    type_ = control_record_type(key)
    if type_ not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        raise CorruptRecordError(f"control record type {type_} is not a transaction marker")
    if value is None or len(value) < _END_TXN_VALUE.size:
        raise CorruptRecordError(
            f"end transaction marker value must have at least {_END_TXN_VALUE.size} bytes"
        )
    _version, coordinator_epoch = _END_TXN_VALUE.unpack_from(value)
    return EndTransactionMarker(ControlRecordType(type_), coordinator_epoch)

"""Fetch before v4: record data in the message format the client reads, as a Kafka 3.9 broker
answers it (``KafkaApis.maybeConvertFetchedData``).

Fetch v0-v1 reads message format v0 and v2-v3 reads v1; what the log holds is down-converted
(:func:`broker_lite.records.conversion.down_convert`) from the fetch offset, per partition:

- when the log's format is newer than the client's and the topic's
  ``message.downconversion.enable`` is false, the partition answers UNSUPPORTED_VERSION;
- a topic with ``compression.type=zstd`` answers UNSUPPORTED_COMPRESSION_TYPE to every Fetch
  before v10 (clients that old cannot read zstd), and so does a first batch to convert that is
  zstd-compressed (a later one ends the data: the client fetches it next and gets the error);
- sizes: the converted data stays within the size of what was read (the partition's and the
  response's limits), except the first converted batch, which is whole however large, so a
  client always progresses; only whole messages are sent.

A partition answering an error carries no high watermark or data, as in Kafka.
"""

from broker_lite.config.topic import LogConfig
from broker_lite.log import FileRegion
from broker_lite.protocol import ErrorCode
from broker_lite.records import UnsupportedCompressionError
from broker_lite.records.conversion import down_convert

LAST_LEGACY_VERSION = 3  # Fetch v4 brought message format v2 (KIP-98)
FIRST_ZSTD_VERSION = 10  # KIP-110


def client_magic(version: int) -> int | None:
    """The message format a Fetch of ``version`` reads; None from v4 (any format)."""
    if version <= 1:
        return 0
    if version <= LAST_LEGACY_VERSION:
        return 1
    return None


def partition_error(config: LogConfig, version: int) -> ErrorCode:
    """What a partition of a topic with ``config`` answers a Fetch of ``version`` before any
    data is read: NONE, or the error of the module docstring."""
    if config.compression_type == "zstd" and version < FIRST_ZSTD_VERSION:
        return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    magic = client_magic(version)
    if magic is not None and config.record_version > magic \
            and not config.message_downconversion_enable:
        return ErrorCode.UNSUPPORTED_VERSION
    return ErrorCode.NONE


def answer_down_converted(response: dict, region: FileRegion, fetch_offset: int,
                          version: int) -> tuple[dict, int]:
    """``response`` with the data of ``region`` in the client's format (the region is read
    and closed), and the size of that data."""
    data = region.read()
    magic = client_magic(version)
    if magic is None:
        raise ValueError(f"Fetch v{version} reads any format: nothing to convert")
    try:
        records = down_convert(data, to_magic=magic, first_offset=fetch_offset,
                               max_bytes=len(data))
    except UnsupportedCompressionError:
        response.update(error_code=ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, high_watermark=-1,
                        last_stable_offset=-1, log_start_offset=-1)
        return response, 0
    response["records"] = records
    return response, len(records)

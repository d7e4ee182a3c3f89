"""The kpy sink: DataFrames written to Kafka topics, exactly-once by default."""

from .options import ColumnError, SinkOptions, check_columns, parse_sink_options
from .writer import KpyBatchWriter, KpyCommitMessage, KpyStreamWriter

__all__ = ["ColumnError", "KpyBatchWriter", "KpyCommitMessage", "KpyStreamWriter",
           "SinkOptions", "check_columns", "parse_sink_options"]

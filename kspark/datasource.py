"""``format("kpy")``: the Python data source that Spark finds by name.

Mistakes are reported where PySpark shows them to the user: the options are checked in
``schema()`` (when a read is loaded) and again when the read is planned, in ``reader()`` for a
batch read and, for a streaming read, in the stream reader's first call (``initialOffset`` or
``latestOffset``): PySpark 4.3 masks an error raised while it makes the stream reader itself
(``UnboundLocalError: cannot access local variable 'reader'``), so ``streamReader()`` hands
any error to a :class:`RefusedStreamReader` that raises it from there.

As Spark's Kafka source, kpy has a fixed schema and refuses a user-specified one
(``spark.read.schema(...)``). A Python data source is not asked anything at ``load()`` when a
schema is given, so the refusal comes when the read is planned, before any task runs: Spark
calls ``schema()`` only when no schema was given, and ``schema()`` marks the source.

>>> KpyDataSource.name()
'kpy'
"""

from pyspark.sql.datasource import DataSource, DataSourceStreamReader
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

from kspark.source.options import SourceOptions, parse_source_options
from kspark.spark_ddl import SPARK_DDL, SPARK_DDL_WITH_HEADERS


class UserSchemaError(ValueError):
    """A read was given a schema: the kpy source has the fixed schema of Spark's Kafka source."""


class KpyDataSource(DataSource):
    """Reads (``spark.read`` / ``spark.readStream``) and writes (``df.write`` /
    ``df.writeStream``) Kafka-protocol topics with the row schema and options of Spark's Kafka
    source and sink."""

    @classmethod
    def name(cls) -> str:
        return "kpy"

    def schema(self):
        # Called when a read is loaded without a schema: every option is checked here, so
        # mistakes fail early.
        options = parse_source_options(self.options)
        self._schema_is_ours = True  # kept when Spark pickles the source for planning
        if not options.structured.structured and options.structured.key.format != "string" \
                and options.structured.value.format != "string":
            return SPARK_DDL_WITH_HEADERS if options.include_headers else SPARK_DDL
        # Structured keys or values: their reader schemas are resolved now, once, and kept
        # (pickled with the source) for the read's planning and its tasks.
        from kspark.structured.rows import plan_rows

        self._structured_plan, schema = plan_rows(options.structured, options.named_topics,
                                                  include_headers=options.include_headers)
        return schema

    def reader(self, schema):
        from kspark.source import KpyBatchReader

        return KpyBatchReader(self._read_options(streaming=False),
                              getattr(self, "_structured_plan", None))

    def streamReader(self, schema):
        from kspark.source import KpyStreamReader

        try:
            options = self._read_options(streaming=True)
        except ValueError as exc:
            return RefusedStreamReader(exc)
        return KpyStreamReader(options, getattr(self, "_structured_plan", None))

    def _read_options(self, streaming: bool) -> SourceOptions:
        """The options of a read being planned, checked for the kind of read."""
        if not getattr(self, "_schema_is_ours", False):
            raise UserSchemaError(
                "KpyDataSource source does not support user-specified schema. Its rows have "
                "the fixed schema of Spark's Kafka source: remove .schema(...) from the read; "
                f"the schema is {SPARK_DDL} (and with includeHeaders=true, "
                "headers array<struct<key: string, value: binary>>)")
        options = parse_source_options(self.options)
        options.starting_for(streaming)
        options.ending_for(streaming)
        return options

    def writer(self, schema, overwrite: bool):
        from kspark.sink import KpyBatchWriter

        return KpyBatchWriter(_sink_options(self.options, schema, overwrite))

    def streamWriter(self, schema, overwrite: bool):
        from kspark.sink import KpyStreamWriter

        return KpyStreamWriter(_sink_options(self.options, schema, overwrite))


class RefusedStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The stream reader of a streaming read whose options (or schema) are refused: it raises
    the refusal from the first call Spark makes, where PySpark reports it to the user."""

    def __init__(self, error: Exception):
        self.error = error

    def _refuse(self, *args, **kwargs):
        raise self.error

    initialOffset = latestOffset = partitions = read = commit = _refuse
    getDefaultReadLimit = prepareForTriggerAvailableNow = reportLatestOffset = _refuse

    def stop(self) -> None:
        pass


def _sink_options(options, schema, overwrite: bool):
    from kspark.options import OptionError
    from kspark.sink import check_columns, parse_sink_options

    if overwrite:
        raise OptionError("mode", "a topic cannot be overwritten: records are only appended "
                                  "(use mode 'append')")
    parsed = parse_sink_options(options)
    check_columns(schema, parsed)
    if parsed.structured_options.structured:
        # the writers' schemas: derived or given, checked against the columns, registered
        import dataclasses

        from kspark.structured.writing import plan_write

        plan = plan_write(parsed.structured_options, schema, parsed.topic)
        parsed = dataclasses.replace(parsed, structured=plan)
    return parsed

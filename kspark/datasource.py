"""``format("kpy")``: the Python data source that Spark finds by name.

>>> KpyDataSource.name()
'kpy'
"""

from pyspark.sql.datasource import DataSource

from broker_lite.records.arrow.schema import SPARK_DDL, SPARK_DDL_WITH_HEADERS
from kspark.options import parse_source_options


class KpyDataSource(DataSource):
    """Reads (``spark.read`` / ``spark.readStream``) and writes (``df.write`` /
    ``df.writeStream``) Kafka-protocol topics with the row schema and options of Spark's Kafka
    source and sink."""

    @classmethod
    def name(cls) -> str:
        return "kpy"

    def schema(self) -> str:
        # Called when a read is loaded: every option is checked here, so mistakes fail early.
        options = parse_source_options(self.options)
        return SPARK_DDL_WITH_HEADERS if options.include_headers else SPARK_DDL

    def reader(self, schema):
        from kspark.source import KpyBatchReader

        return KpyBatchReader(parse_source_options(self.options))

    def streamReader(self, schema):
        from kspark.source import KpyStreamReader

        return KpyStreamReader(parse_source_options(self.options))

    def writer(self, schema, overwrite: bool):
        from kspark.sink import KpyBatchWriter

        return KpyBatchWriter(_sink_options(self.options, schema, overwrite))

    def streamWriter(self, schema, overwrite: bool):
        from kspark.sink import KpyStreamWriter

        return KpyStreamWriter(_sink_options(self.options, schema, overwrite))


def _sink_options(options, schema, overwrite: bool):
    from kspark.options import OptionError
    from kspark.sink import check_columns, parse_sink_options

    if overwrite:
        raise OptionError("mode", "a topic cannot be overwritten: records are only appended "
                                  "(use mode 'append')")
    parsed = parse_sink_options(options)
    check_columns(schema, parsed)
    return parsed

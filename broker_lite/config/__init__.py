"""Configuration with Kafka's own names, defaults and types.

=====================  ========================================================================
module                 concept
=====================  ========================================================================
``parsers``            typed setting parsers, as Kafka's ``ConfigDef`` (and Spark) read values;
                       the errors of a setting
``properties``         Java ``.properties`` files (``server.properties`` and the tools' files)
``format_versions``    message format versions, and the record format a log writes for each
``kafka_configs``      Kafka's broker settings that broker_lite accepts without an effect
``definitions``        every broker setting's type, bounds and default
``topic``              topic settings and their broker defaults; a partition's ``LogConfig``
``broker``             ``BrokerConfig``: the settings in force, static and dynamic
``dynamic``            dynamic broker settings kept in ZooKeeper (``kafka-configs.sh``)
``resolution``         which value, source and synonyms each setting has (DescribeConfigs)
``defaults``           what ``broker-lite start`` runs with when given no file
=====================  ========================================================================

The common names are given here too, each imported from its module when first asked for.
"""

from broker_lite.common.lazy_exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    ".broker": ("BrokerConfig",),
    ".parsers": ("ConfigError",),
    ".properties": ("parse_properties", "read_properties"),
    ".topic": ("LogConfig",),
})

__all__ = ["BrokerConfig", "ConfigError", "LogConfig", "parse_properties", "read_properties"]

"""Test support for projects that use kpy: a real ZooKeeper, broker_lite brokers, topics,
records in and out, and a local SparkSession.

:mod:`.plugin` is the pytest plugin (fixtures ``kpy_spark``, ``kpy_broker``, ``kpy_topic``,
``kpy_produce``, ``kpy_read``, ...), registered with pytest when kpy is installed. The pieces it
is built from work without pytest too:

:mod:`.zookeeper`
    the session's ZooKeeper (embedded or external) and a chroot per test;
:mod:`.brokers`
    :class:`~.brokers.KpyBroker`, brokers on free ports with single-machine settings;
:mod:`.rows`
    rows as tests write them (values, pairs, dicts, Arrow, pandas) to Arrow columns;
:mod:`.topics`
    unique topics, :func:`~.topics.produce` and :func:`~.topics.read_topic`;
:mod:`.spark`
    the test SparkSession.

Nothing heavy is imported until used, so the plugin costs every pytest run next to nothing.
"""

from importlib import import_module

_EXPORTS = {
    "KpyBroker": "brokers", "ZooKeeperEnsemble": "zookeeper", "to_arrow": "rows",
    "RowError": "rows", "TopicFactory": "topics", "produce": "topics", "read_topic": "topics",
    "unique_topic_name": "topics", "start_test_session": "spark",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)

"""SparkSessions for kpy: ``kspark.session()`` builds a local one ready to use, and
``kspark.register(spark)`` makes ``format("kpy")`` known to a session built elsewhere.

An installed kpy is found by Spark on its own (see ``pyspark_kpy``); registering explicitly is
for editable installs and sessions whose Python workers cannot import the installed package.
Spark's Python workers must run the interpreter that has kpy installed: ``session()`` sets
that up (``spark.pyspark.python``); elsewhere set ``PYSPARK_PYTHON`` to that interpreter.

The configuration directory
---------------------------
``session()`` takes its settings from a Spark configuration directory as ``spark-submit`` does:
the ``conf_dir`` argument, else ``$SPARK_CONF_DIR``, else the ``conf/`` directory of a kpy source
checkout (:data:`REPOSITORY_CONF_DIR`, used when it holds a ``spark-defaults.conf``). Two files
of it matter:

``spark-defaults.conf``
    Spark settings, one ``name value`` per line (Java properties syntax); the repository's
    holds :data:`LOCAL_DEFAULTS`.
``log4j2.properties``
    The JVM's logging; the repository's keeps a local session silent on start.

PySpark starts its JVM with ``$SPARK_HOME/bin/spark-submit``, whose launcher reads
``spark-defaults.conf`` from ``$SPARK_CONF_DIR`` (``$SPARK_HOME/conf``, absent from the pyspark
wheel, when unset) and puts that directory first on the JVM's classpath, where log4j finds
``log4j2.properties``. So ``session()`` sets ``SPARK_CONF_DIR`` while it starts the JVM. The JVM
starts once per process: a session built when one already runs keeps that JVM's logging, yet
still gets the directory's ``spark-defaults.conf``, which ``session()`` reads itself.

Settings win in this order, lowest first: :data:`LOCAL_DEFAULTS`, ``spark.pyspark.python``, the
directory's ``spark-defaults.conf``, the ``config`` argument.
"""

from __future__ import annotations

import os
import pkgutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pyspark is imported when a session is built, not with kspark
    from pyspark.sql import SparkSession

# A local session that starts fast and stays quiet: few shuffle partitions, no web UI, Arrow on.
# Its Python workers reach the JVM over Unix domain sockets: over TCP, the JVM listens on a
# loopback port, and any other process that connects there first (a client retrying a port that
# a stopped server held) makes the worker fail with "Python worker failed to connect back".
# conf/spark-defaults.conf holds the same settings (a test keeps the two equal).
LOCAL_DEFAULTS = {
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.python.worker.reuse": "true",
    "spark.python.unix.domain.socket.enabled": "true",
}

SPARK_DEFAULTS_FILE = "spark-defaults.conf"
LOG4J2_FILE = "log4j2.properties"

#: The ``conf/`` directory beside the ``kspark`` package in a source checkout (editable installs).
REPOSITORY_CONF_DIR = Path(__file__).resolve().parent.parent / "conf"


def register(spark: SparkSession) -> SparkSession:
    """Register ``format("kpy")`` with ``spark``; returns ``spark``."""
    from kspark.datasource import KpyDataSource

    spark.dataSource.register(KpyDataSource)
    return spark


def resolve_conf_dir(explicit: str | os.PathLike | None = None) -> Path | None:
    """The Spark configuration directory ``session()`` uses: ``explicit``, else
    ``$SPARK_CONF_DIR``, else :data:`REPOSITORY_CONF_DIR` if it has a ``spark-defaults.conf``,
    else None (Spark's own defaults)."""
    if explicit is not None:
        directory = Path(explicit)
        if not directory.is_dir():
            raise NotADirectoryError(f"Spark configuration directory {directory} does not exist")
        return directory
    if os.environ.get("SPARK_CONF_DIR"):
        return Path(os.environ["SPARK_CONF_DIR"])
    if (REPOSITORY_CONF_DIR / SPARK_DEFAULTS_FILE).is_file():
        return REPOSITORY_CONF_DIR
    return None


def spark_defaults(directory: str | os.PathLike | None) -> dict[str, str]:
    """The settings of ``directory/spark-defaults.conf`` ({} without one), read as Spark reads
    it: Java properties, values trimmed, names not starting with ``spark.`` ignored."""
    if directory is None:
        return {}
    path = Path(directory) / SPARK_DEFAULTS_FILE
    if not path.is_file():
        return {}
    # Imported here: every Python process Spark starts for the source imports this module (with
    # ``kspark``), and none of them reads a properties file.
    from broker_lite.config.properties import read_properties

    return {name: value.strip() for name, value in read_properties(path).items()
            if name.startswith("spark.")}


def session(app_name: str = "kpy", master: str = "local[*]",
            config: dict[str, str] | None = None, *,
            conf_dir: str | os.PathLike | None = None) -> SparkSession:
    """A SparkSession (the active one if there is one) where ``format("kpy")`` is known (found
    by Spark, else registered) and Python workers run this interpreter.

    Settings come from :data:`LOCAL_DEFAULTS`, then the configuration directory (``conf_dir``,
    else ``$SPARK_CONF_DIR``, else the repository's ``conf/``; see the module docstring), then
    ``config``.
    """
    from pyspark.sql import SparkSession

    directory = resolve_conf_dir(conf_dir)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name).master(master)
    settings = {**LOCAL_DEFAULTS, "spark.pyspark.python": sys.executable,
                **spark_defaults(directory), **(config or {})}
    for key, value in settings.items():
        builder = builder.config(key, value)
    with _environment("SPARK_CONF_DIR", None if directory is None else str(directory)):
        spark = builder.getOrCreate()  # launches the JVM with spark-submit, if none runs yet
    if not found_by_spark():
        register(spark)
    return spark


def found_by_spark() -> bool:
    """Whether Spark finds ``format("kpy")`` by itself: its Python workers look for modules named
    ``pyspark_*`` with ``pkgutil.iter_modules``, as this does. Registering once more would only
    make Spark warn that a statically registered data source was replaced."""
    return any(module.name == "pyspark_kpy" for module in pkgutil.iter_modules())


@contextmanager
def _environment(name: str, value: str | None) -> Iterator[None]:
    """``os.environ[name] = value`` inside the block (nothing when ``value`` is None)."""
    if value is None:
        yield
        return
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before

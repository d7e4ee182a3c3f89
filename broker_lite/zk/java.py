"""The Java runtime and the classpath of an embedded ZooKeeper server.

ZooKeeper runs from the jars the pyspark wheel ships in ``pyspark/jars``, with the Java that Spark
needs anyway. The classpath is an explicit list: nothing else from that directory is loaded.
"""

import importlib.util
import os
import re
import shutil
from pathlib import Path

from .errors import JavaNotFoundError, ZooKeeperJarsNotFoundError

# (artifact, why ZooKeeperServerMain needs it); each matches ``<artifact>-<version>.jar``.
CLASSPATH_ARTIFACTS = (
    ("zookeeper", "the server"),
    ("zookeeper-jute", "its wire records"),
    ("slf4j-api", "its logging calls"),
    ("log4j-slf4j2-impl", "routes them to log4j, which writes the log file"),
    ("log4j-api", "log4j"),
    ("log4j-core", "log4j"),
    ("metrics-core", "the default metrics provider's summaries (Dropwizard)"),
    ("snappy-java", "snapshot streams load its classes even when uncompressed"),
)

_JAVA_HINT = ("ZooKeeper needs Java 17 (the Java Spark uses): install it and put java on PATH, "
              "or set JAVA_HOME")


def find_java(java: str | os.PathLike | None = None) -> Path:
    """The ``java`` executable: the one given, else ``$JAVA_HOME/bin/java``, else ``java`` on
    PATH."""
    if java is not None:
        candidate = shutil.which(os.fspath(java))
        if candidate is None:
            raise JavaNotFoundError(f"java executable {os.fspath(java)!r} not found. {_JAVA_HINT}")
        return Path(candidate)
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = shutil.which(str(Path(java_home, "bin", "java")))
        if candidate is None:
            raise JavaNotFoundError(f"JAVA_HOME={java_home} has no bin/java. {_JAVA_HINT}")
        return Path(candidate)
    candidate = shutil.which("java")
    if candidate is None:
        raise JavaNotFoundError(f"no java on PATH and JAVA_HOME is unset. {_JAVA_HINT}")
    return Path(candidate)


def pyspark_jars_dir() -> Path:
    """``pyspark/jars`` of the installed pyspark, found without importing pyspark itself."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise ZooKeeperJarsNotFoundError(
            "pyspark is not installed, and its wheel provides the ZooKeeper jars: "
            "pip install pyspark")
    return Path(spec.origin).parent / "jars"


def _version_key(jar: Path) -> tuple:
    # numbers compare as numbers (3.10 after 3.9), and never against words
    return tuple((0, int(n), "") if n.isdigit() else (1, 0, n) for n in re.split(r"[.-]", jar.stem))


def zookeeper_classpath(jars_dir: str | os.PathLike | None = None) -> list[Path]:
    """The jars of :data:`CLASSPATH_ARTIFACTS` found in ``jars_dir`` (default: pyspark's).

    A version must follow the artifact name, so ``zookeeper`` does not match ``zookeeper-jute``,
    and classifier jars (``-tests``, ``-sources``) do not match at all.
    """
    directory = Path(jars_dir) if jars_dir is not None else pyspark_jars_dir()
    if not directory.is_dir():
        raise ZooKeeperJarsNotFoundError(
            f"no jars directory at {directory} (searched for ZooKeeper)")
    jars = sorted(directory.glob("*.jar"))
    classpath, missing = [], []
    for artifact, _why in CLASSPATH_ARTIFACTS:
        pattern = re.compile(re.escape(artifact) + r"-\d[\w.]*\.jar$")
        found = [jar for jar in jars if pattern.match(jar.name)]
        if found:
            classpath.append(max(found, key=_version_key))
        else:
            missing.append(f"{artifact}-<version>.jar")
    if missing:
        raise ZooKeeperJarsNotFoundError(
            f"missing from {directory}: {', '.join(missing)}. The pyspark wheel ships these jars; "
            f"reinstall pyspark (>= 4) or pass the directory that holds them")
    return classpath

"""conf/spark-defaults.conf and conf/log4j2.properties, and kspark.session() taking its settings
from a Spark configuration directory. Sessions that must start their own JVM run in a fresh
Python process, apart from the test session's SparkSession."""

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from spark_archive import BASE_SUBMIT_OPTS

from kspark.session import (
    LOCAL_DEFAULTS,
    REPOSITORY_CONF_DIR,
    resolve_conf_dir,
    spark_defaults,
)

ROOT = Path(__file__).resolve().parents[3]
session_module = importlib.import_module("kspark.session")  # kspark.session is also a function

# The JVM itself prints this for the incubator module Spark's launcher always adds
# (--add-modules=jdk.incubator.vector); no Spark or log4j setting reaches it.
JVM_INCUBATOR_NOTICE = "WARNING: Using incubator modules: jdk.incubator.vector"
# pyspark 4.3 warns that it does not fully support pandas 3 when it first imports pandas; that
# is about the installed pandas, not about starting a session.
PANDAS_VERSION_WARNING = "ignore:PySpark does not yet fully support pandas:FutureWarning"

SESSION_SCRIPT = textwrap.dedent("""
    import json, os, sys
    import kspark

    arguments, names = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    spark = kspark.session("conf-check", master="local[1]", **arguments)
    spark.range(3).count()  # a job, so tasks ran too
    conf = spark.sparkContext.getConf()
    print(json.dumps({"settings": {name: conf.get(name, None) for name in names},
                      "sql_shuffle_partitions": spark.conf.get("spark.sql.shuffle.partitions"),
                      "SPARK_CONF_DIR": os.environ.get("SPARK_CONF_DIR")}))
    spark.stop()
""")


def run_session(cwd: Path, **arguments) -> tuple[dict, list[str]]:
    """Build a session with ``kspark.session(**arguments)`` in a new process started in
    ``cwd`` without SPARK_CONF_DIR, and without the suite's class-data archive and logging
    (tests/spark_archive.py); returns what it printed and its stderr lines."""
    env = {k: v for k, v in os.environ.items() if k != "SPARK_CONF_DIR"}
    env["SPARK_SUBMIT_OPTS"] = BASE_SUBMIT_OPTS
    done = subprocess.run(
        [sys.executable, "-W", PANDAS_VERSION_WARNING, "-c", SESSION_SCRIPT,
         json.dumps(arguments), json.dumps([*LOCAL_DEFAULTS, "spark.kpy.marker"])],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr.splitlines()


def test_local_defaults_and_the_repositorys_spark_defaults_conf_agree():
    assert REPOSITORY_CONF_DIR == ROOT / "conf"
    assert spark_defaults(REPOSITORY_CONF_DIR) == LOCAL_DEFAULTS


def test_the_log4j2_configuration_sends_warnings_to_stderr_and_quiets_start_up_noise():
    from broker_lite.config.properties import read_properties

    log4j = read_properties(REPOSITORY_CONF_DIR / "log4j2.properties")
    assert log4j["rootLogger.level"] == "warn"
    appender = log4j["rootLogger.appenderRef.stderr.ref"]
    assert log4j["appender.console.name"] == appender
    assert log4j["appender.console.target"] == "SYSTEM_ERR"
    levels = {log4j[key]: log4j[key.replace(".name", ".level")]
              for key in log4j if key.startswith("logger.") and key.endswith(".name")}
    assert levels["org.apache.hadoop.util.NativeCodeLoader"] == "error"
    assert levels["org.apache.spark.util.Utils"] == "error"


def test_spark_defaults_are_read_as_spark_reads_them(tmp_path):
    (tmp_path / "spark-defaults.conf").write_text(
        "# a comment\n"
        "spark.sql.shuffle.partitions   7   \n"
        "spark.app.name=with equals\n"
        "spark.driver.extraJavaOptions  -Da=1 \\\n    -Db=2\n"
        "not.spark.setting  ignored\n", encoding="utf-8")
    assert spark_defaults(tmp_path) == {
        "spark.sql.shuffle.partitions": "7", "spark.app.name": "with equals",
        "spark.driver.extraJavaOptions": "-Da=1 -Db=2"}
    assert spark_defaults(tmp_path / "elsewhere") == {}
    assert spark_defaults(None) == {}


def test_the_conf_dir_is_the_argument_then_spark_conf_dir_then_the_repositorys(tmp_path,
                                                                               monkeypatch):
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "from-env"))
    assert resolve_conf_dir(tmp_path) == tmp_path
    assert resolve_conf_dir() == tmp_path / "from-env"
    monkeypatch.delenv("SPARK_CONF_DIR")
    assert resolve_conf_dir() == REPOSITORY_CONF_DIR
    monkeypatch.setattr(session_module, "REPOSITORY_CONF_DIR", tmp_path / "no-checkout")
    assert resolve_conf_dir() is None
    with pytest.raises(NotADirectoryError, match="does not exist"):
        resolve_conf_dir(tmp_path / "missing")


@pytest.mark.spark
def test_a_session_started_from_the_repository_is_quiet(tmp_path):
    printed, stderr = run_session(tmp_path)
    assert printed["settings"] == {**LOCAL_DEFAULTS, "spark.kpy.marker": None}
    assert printed["SPARK_CONF_DIR"] is None  # set only while the JVM started
    assert [line for line in stderr if line.strip()] == [JVM_INCUBATOR_NOTICE]


@pytest.mark.spark
def test_a_session_takes_spark_defaults_and_logging_from_its_conf_dir(tmp_path):
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text(
        "spark.sql.shuffle.partitions 7\nspark.default.parallelism 3\nspark.kpy.marker on\n",
        encoding="utf-8")
    # SparkContext's info messages, with a pattern of its own: seen only if the JVM's log4j
    # read this file
    (conf / "log4j2.properties").write_text(textwrap.dedent("""
        rootLogger.level = warn
        logger.context.name = org.apache.spark.SparkContext
        logger.context.level = info
        rootLogger.appenderRef.stderr.ref = console
        appender.console.type = Console
        appender.console.name = console
        appender.console.target = SYSTEM_ERR
        appender.console.layout.type = PatternLayout
        appender.console.layout.pattern = CONF-DIR-LOG %p %c{1}: %m%n
    """), encoding="utf-8")
    printed, stderr = run_session(tmp_path, conf_dir=str(conf),
                                  config={"spark.sql.shuffle.partitions": "9"})
    assert printed["settings"] == {**LOCAL_DEFAULTS, "spark.sql.shuffle.partitions": "9",
                                   "spark.default.parallelism": "3", "spark.kpy.marker": "on"}
    assert printed["sql_shuffle_partitions"] == "9"
    assert any(line.startswith("CONF-DIR-LOG INFO SparkContext: Running Spark version")
               for line in stderr), stderr[:20]

"""The suite's Spark drivers map the class-data archive that tests/spark_archive.py records: a
recording that stopped working (a new pyspark that ends its JVM otherwise, say) would only make
the suite slower, so this test says so."""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

RECORDING_TIMEOUT_S = 300  # the recording starts with the run and takes about a minute

DRIVER = """
import kspark

spark = kspark.session("archive-check", master="local[1]")
pid = spark._jvm.java.lang.ProcessHandle.current().pid()
with open(f"/proc/{pid}/maps") as maps:
    for path in {line.split()[-1] for line in maps if line.rstrip().endswith(".jsa")}:
        print(path)
spark.stop()
"""


@pytest.mark.spark
@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/<pid>/maps")
def test_a_driver_started_once_the_archive_is_recorded_maps_it():
    found = re.search(r"-XX:SharedArchiveFile=(\S+)", os.environ.get("SPARK_SUBMIT_OPTS", ""))
    if found is None:
        pytest.skip("SPARK_SUBMIT_OPTS or SPARK_CONF_DIR was set outside the suite, which then "
                    "records no archive (tests/spark_archive.py)")
    archive = Path(found.group(1))
    deadline = time.monotonic() + RECORDING_TIMEOUT_S
    while not archive.is_file():
        log = archive.parent / "record.log"
        assert time.monotonic() < deadline, (
            f"no archive recorded within {RECORDING_TIMEOUT_S} s; the recording's log:\n"
            + (log.read_text(errors="replace")[-3000:] if log.is_file() else "(none)"))
        time.sleep(1)
    done = subprocess.run([sys.executable, "-c", DRIVER], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    mapped = done.stdout.splitlines()  # the JDK's own archive too
    assert str(archive) in mapped, mapped

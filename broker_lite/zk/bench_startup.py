"""Benchmark: embedded ZooKeeper start-to-first-answer against the 5 s target.

``python -m broker_lite.zk.bench_startup [-n RUNS]`` starts and stops a server RUNS times (each
in a fresh data dir), printing each start-to-serving time and the median, and as a peer measured
in the same run, the time of a bare JVM start (``java -version``) on the same machine, so the
figure reads as "ZooKeeper costs this many JVM starts" across machines.
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from .errors import ZooKeeperUnavailableError
from .java import find_java
from .server import EmbeddedZooKeeper

TARGET_S = 5.0


def measure_startup(runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        with (tempfile.TemporaryDirectory(prefix="kpy-zk-bench-") as data_dir,
              EmbeddedZooKeeper(data_dir) as server):
            if server.startup_seconds is None:  # set once start() returned
                raise RuntimeError("the server started without timing its start")
            times.append(server.startup_seconds)
    return times


def measure_jvm_start(runs: int) -> list[float]:
    java = str(find_java())
    times = []
    for _ in range(runs):
        began = time.monotonic()
        subprocess.run([java, "-version"], check=True, capture_output=True)
        times.append(time.monotonic() - began)
    return times


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m broker_lite.zk.bench_startup",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=5, help="starts to measure (default 5)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    try:
        times = measure_startup(args.runs)
        jvm = statistics.median(measure_jvm_start(args.runs))
    except ZooKeeperUnavailableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"embedded ZooKeeper, start to first answer (srvr), {args.runs} run(s):")
    for number, seconds in enumerate(times, 1):
        print(f"  run {number}: {seconds:.3f} s")
    median = statistics.median(times)
    verdict = "met" if median <= TARGET_S else "MISSED"
    print(f"median: {median:.3f} s; target {TARGET_S:.1f} s {verdict} "
          f"({median / TARGET_S:.0%} of the target)")
    print(f"peer: bare JVM start (java -version) median {jvm:.3f} s; "
          f"ZooKeeper startup = {median / jvm:.1f}x a JVM start")
    return 0


if __name__ == "__main__":
    sys.exit(main())

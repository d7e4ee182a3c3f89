"""tests/hang_report.py, run as the suite runs it (xdist workers) on tests made to hang."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = Path(__file__).resolve().parent

PROBES = '''
import threading

import pytest


def test_waits_forever():
    release = threading.Event()

    def wait_for_release():
        release.wait()

    waiter = threading.Thread(target=wait_for_release, name="the-waiter", daemon=True)
    waiter.start()
    waiter.join()


@pytest.fixture
def teardown_that_hangs():
    yield
    threading.Event().wait()


def test_hangs_then_its_teardown_hangs(teardown_that_hangs):
    threading.Event().wait()


def test_fails_then_its_teardown_hangs(teardown_that_hangs):
    assert False, "failed on its own"


def test_quick():
    pass
'''


def run_probes(tmp_path: Path) -> str:
    (tmp_path / "pytest.ini").write_text("[pytest]\ntimeout = 3\ntimeout_method = signal\n")
    (tmp_path / "test_probes.py").write_text(textwrap.dedent(PROBES))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-p", "hang_report", "-p", "no:kpy",
         "-p", "no:cacheprovider", "test_probes.py"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(TESTS)}, capture_output=True,
        text=True, timeout=120)
    return run.stdout + run.stderr


def test_a_hung_test_fails_with_every_threads_stack_and_the_others_still_run(tmp_path):
    output = run_probes(tmp_path)
    assert "Timeout: the test ran over 3 s; every thread's stack follows" in output, output
    # the test's own wait, and the thread it waited for, named
    assert "--- thread the-waiter" in output and "waiter.join()" in output, output
    assert "release.wait" in output, output
    # the teardown that hung too ended its worker, which xdist reports and replaces
    assert "crashed while running 'test_probes.py::test_hangs_then_its_teardown_hangs'" \
        in output, output
    # a test that failed on its own still has its teardown guarded
    assert "AssertionError: failed on its own" in output, output
    assert "ERROR at teardown of test_fails_then_its_teardown_hangs" in output, output
    # the two hangs, the crash and the failure; the teardown's timeout; the quick test
    assert "4 failed, 1 passed, 1 error" in output, output

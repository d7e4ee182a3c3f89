"""Tier markers from fixtures (kspark.testing.tiers): a test is marked by what its fixtures,
direct or indirect, declare with ``@needs``, so ``-m`` selects tiers; the suite's guard fails a
test that starts a broker without the marker."""

import pytest

from kspark.testing.tiers import TierError, guard, needs, tiers_of

pytest_plugins = ["pytester"]

PROJECT = '''
import pytest
from kspark.testing.tiers import needs

@pytest.fixture
@needs("broker", "zookeeper")
def cluster():
    return "cluster"

@pytest.fixture
def topic(cluster):          # declares nothing itself: the closure carries the tiers
    return "topic"

def test_unit():
    pass

def test_indirect(topic):
    pass

@pytest.mark.slow
def test_marked_by_hand():
    pass
'''


@pytest.mark.parametrize(("expression", "selected"), [
    ("broker", ["test_indirect"]),
    ("zookeeper", ["test_indirect"]),
    ("not broker and not slow", ["test_unit"]),
    ("slow", ["test_marked_by_hand"]),
    ("spark", []),
])
def test_markers_follow_the_fixture_closure(pytester, expression, selected):
    pytester.makepyfile(test_project=PROJECT)
    result = pytester.runpytest_subprocess("--strict-markers", "-m", expression, "-v")
    passed = sorted(line.split("::")[1].split()[0] for line in result.outlines
                    if "PASSED" in line)
    assert passed == selected


def test_needs_refuses_an_unknown_tier():
    with pytest.raises(ValueError, match="unknown tier 'brokers'"):
        needs("brokers")


def test_the_plugins_own_fixtures_carry_their_tiers(request):
    # this test uses none of them: no tier
    assert tiers_of(request.node) == set()


def test_the_guard_fails_a_start_in_a_test_without_the_marker(request):
    started = []
    guarded = guard("broker", "a broker_lite broker", lambda: started.append(1))
    with pytest.raises(TierError, match="starts a broker_lite broker but is not marked 'broker'"):
        guarded()
    assert started == []
    request.node.add_marker("broker")
    guarded()
    assert started == [1]


def test_enforced_tiers_fail_an_unmarked_spark_session(pytester):
    pytester.makepyfile(test_project='''
import pytest
from pyspark.sql import SparkSession

def test_starts_spark_unmarked():
    SparkSession.builder.master("local[1]").getOrCreate()
''')
    pytester.makeini("[pytest]\nkpy_enforce_tiers = true\n")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*TierError*is not marked 'spark'*"])

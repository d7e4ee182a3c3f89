"""The plugin's ``kpy_ci_skips_fail``: in CI a skipped test (a doctest too) fails the run."""

import pytest

pytest_plugins = ["pytester"]

PROJECT = {
    "test_skipping.py": '''
import pytest

def test_skipped():
    pytest.skip("no Java here")

@pytest.mark.xfail(reason="known", strict=True)
def test_expected_failure():
    assert False
''',
    "module.py": '''
def answer():
    """
    >>> answer()  # doctest: +SKIP
    42
    """
    return 42
''',
}


@pytest.mark.parametrize("ini,ci,failed", [(True, "true", 2), (True, None, 0), (False, "true", 0)])
def test_skips_fail_only_in_ci_and_when_asked(pytester, monkeypatch, ini, ci, failed):
    pytester.makepyfile(**PROJECT)
    pytester.makeini(f"[pytest]\naddopts = --doctest-modules\nkpy_ci_skips_fail = {ini}\n")
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=failed, skipped=2 - failed, xfailed=1)
    if failed:
        result.stdout.fnmatch_lines(["*skipped in CI, which counts as a failure*"])

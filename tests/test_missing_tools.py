"""A run without the tools the tests need says so once, under the line that installs them."""

from __future__ import annotations

import os

import pytest

from tests.conftest import ROOT

PASSING_AND_MISSING = """
import pytest
from tests.missing_tools import missing

@pytest.fixture(scope="session")
def browser():
    missing("Chromium (/nowhere/chromium)", "apt-get install chromium")

@pytest.mark.parametrize("n", range(5))
def test_needs_an_agent(n):
    missing("Claude Code", "npm ci --prefix tools/agents")

@pytest.mark.parametrize("n", range(3))
def test_needs_a_browser(browser, n):
    pass

def test_plain_failure():
    assert 1 == 2

def test_passes():
    pass
"""


def test_tests_missing_a_tool_fail_and_are_counted_under_its_install_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), *([path] if path else [])]))
    pytester.makepyfile(test_sample=PASSING_AND_MISSING)
    result = pytester.runpytest_subprocess("-p", "tests.missing_tools", "-p", "no:cacheprovider")
    # they fail (never skipped, never green), and each says the one line that installs the tool
    result.assert_outcomes(passed=1, failed=6, errors=3)
    result.stdout.fnmatch_lines(
        [
            "*tools the tests need are missing*",
            "5 tests failed for want of a tool: run `npm ci --prefix tools/agents`",
            "3 tests failed for want of a tool: run `apt-get install chromium`",
        ]
    )
    # a failure that has nothing to do with a tool is not counted as one
    assert "1 test failed for want" not in result.stdout.str()


SAMPLES_ABSENT = """
import pytest
from tests.missing_tools import no_samples

@pytest.fixture(scope="session")
def samples():
    no_samples()

@pytest.mark.parametrize("n", range(4))
def test_reads_samples(samples, n):
    pass

def test_skips_for_another_reason():
    pytest.skip("not this platform")

def test_passes():
    pass
"""


def test_tests_skipped_for_missing_samples_are_counted_loudly_in_the_summary(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), *([path] if path else [])]))
    pytester.makepyfile(test_sample=SAMPLES_ABSENT)
    result = pytester.runpytest_subprocess("-p", "tests.missing_tools", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=5)
    result.stdout.fnmatch_lines(
        [
            "*sample transcripts are missing*",
            "4 tests skipped: ../shared/samples/transcripts is not beside the checkout*",
        ]
    )

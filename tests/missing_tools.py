"""Tools the tests need beyond Python (the agents' CLIs, Chromium). A test that needs a missing
one fails with the one line that installs it (``missing``), and the run's summary counts those
failures under that line, so one missing tool reads as one cause, not as dozens of red tests.
``scripts/test`` installs them all; this is what a run without it says.

The real agents' session files in ``../shared/samples`` are not a tool: where they are absent the
tests that read them skip (``no_samples``), and the summary says how many, loudly, so a green run
without them is never mistaken for a run that read them."""

from __future__ import annotations

import re
from collections import Counter
from typing import NoReturn

import pytest

_SAID = re.compile(r"is not installed\b.*?: run `([^`]+)`", re.DOTALL)


def missing(what: str, install: str) -> NoReturn:
    """Fail the test: ``what`` is not installed, and ``install`` installs it."""
    pytest.fail(f"{what} is not installed: run `{install}`", pytrace=False)


SAMPLES_ABSENT = "../shared/samples/transcripts is not beside the checkout"


def no_samples() -> NoReturn:
    """Skip the test: the sample transcripts it reads are not beside the checkout."""
    pytest.skip(SAMPLES_ABSENT)


def _skipped_for_samples(terminalreporter: pytest.TerminalReporter) -> int:
    return sum(
        1
        for report in terminalreporter.stats.get("skipped", [])
        if isinstance(report.longrepr, tuple) and SAMPLES_ABSENT in str(report.longrepr[2])
    )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    skipped = _skipped_for_samples(terminalreporter)
    if skipped:
        terminalreporter.section("sample transcripts are missing", sep="=", yellow=True)
        tests = f"{skipped} test" + ("" if skipped == 1 else "s")
        terminalreporter.write_line(
            f"{tests} skipped: {SAMPLES_ABSENT} (they read real agents' files; CI has them)",
            yellow=True,
        )
    causes: Counter[str] = Counter()
    for kind in ("failed", "error"):
        for report in terminalreporter.stats.get(kind, []):
            found = _SAID.search(getattr(report, "longreprtext", "") or "")
            if found is not None:
                causes[found.group(1)] += 1
    if not causes:
        return
    terminalreporter.section("tools the tests need are missing", sep="=", red=True)
    for install, count in causes.most_common():
        tests = f"{count} test" + ("" if count == 1 else "s")
        terminalreporter.write_line(f"{tests} failed for want of a tool: run `{install}`")
    terminalreporter.write_line("(scripts/test installs every tool the tests need)")

"""Figures for probes written as plain tests: a module that sets ``PROBE`` (what it tries, what it ran, what it
must show) gets its row in docs/reliability.md from its tests' outcomes, one case per test."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from tests.reliability.figures import record


@dataclass
class _Outcomes:
    probe: tuple[str, str, str]
    started: float = field(default_factory=time.monotonic)
    ended: float = field(default_factory=time.monotonic)
    cases: int = 0
    failed: list[str] = field(default_factory=list)


_seen: dict[str, _Outcomes] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    probe = getattr(getattr(item, "module", None), "PROBE", None)
    if probe is None:
        return
    outcomes = _seen.setdefault(item.module.__name__, _Outcomes(probe))  # type: ignore[attr-defined]
    outcomes.ended = time.monotonic()
    if report.skipped or (report.when != "call" and report.passed):
        return
    if report.when == "call":
        outcomes.cases += 1
    if report.failed:
        outcomes.cases += report.when != "call"
        outcomes.failed.append(item.name)


def pytest_sessionfinish(session: pytest.Session) -> None:
    for outcomes in _seen.values():
        probe, ran, must_show = outcomes.probe
        failed = outcomes.failed
        shown = ", ".join(failed[:8]) + (", ..." if len(failed) > 8 else "")
        result = f"FAILED: {len(failed)} of {outcomes.cases} cases ({shown})" if failed else "0 problems"
        record(
            probe,
            ran.format(cases=outcomes.cases),
            f"{result} in {outcomes.cases} cases" if not failed else result,
            must_show,
            time.monotonic() - (outcomes.ended - outcomes.started),
            setups=outcomes.cases,
        )

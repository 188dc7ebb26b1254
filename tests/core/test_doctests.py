"""The examples in core/'s docstrings run, and every public name of ``turnmark.core`` has one.

Run with ``doctest`` over each core module (not ``--doctest-modules``, which would also
import every shell module); a failing example fails its module's test with doctest's report.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
from pathlib import Path

import pytest

import turnmark.core

CORE = Path(__file__).resolve().parents[2] / "core"
MODULES = sorted(
    "turnmark.core." + ".".join(path.relative_to(CORE).with_suffix("").parts)
    for path in CORE.rglob("*.py")
    if path.stem != "__init__"
)
OPTIONS = doctest.ELLIPSIS


def run_examples(module_name: str) -> tuple[int, int, str]:
    """(failed, attempted, report) for the docstring examples of one module."""
    module = importlib.import_module(module_name)
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    report: list[str] = []
    for test in doctest.DocTestFinder().find(module, module_name):
        runner.run(test, out=report.append)
    results = runner.summarize(verbose=False)
    return results.failed, results.attempted, "".join(report)


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples_pass(module_name: str) -> None:
    failed, _, report = run_examples(module_name)
    assert failed == 0, report


def test_the_examples_are_found() -> None:
    attempted = sum(run_examples(name)[1] for name in MODULES)
    assert attempted >= len(turnmark.core.__all__)


def examples_of(obj: object) -> list[doctest.Example]:
    return doctest.DocTestParser().get_examples(inspect.getdoc(obj) or "")


@pytest.mark.parametrize("name", turnmark.core.__all__)
def test_every_public_name_has_an_example(name: str) -> None:
    obj = getattr(turnmark.core, name)
    if inspect.isclass(obj) or inspect.isfunction(obj):
        assert obj.__module__.startswith("turnmark.core."), f"{name} is defined outside core"
        assert examples_of(obj), f"turnmark.core.{name} has no >>> example in its docstring"
        assert obj.__module__ in MODULES, f"{name}'s examples would not be run"
        return
    # A type alias has no docstring of its own: an exported name's example must use it.
    users = [
        other
        for other in turnmark.core.__all__
        if any(name in example.source for example in examples_of(getattr(turnmark.core, other)))
    ]
    assert users, f"no example of a public name shows {name}"

"""The examples in shell/'s docstrings run too (only the modules that hold one are imported)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.test_doctests import run_examples

SHELL = Path(__file__).resolve().parents[2] / "shell"
MODULES = sorted(
    "turnmark.shell." + ".".join(path.relative_to(SHELL).with_suffix("").parts)
    for path in SHELL.rglob("*.py")
    if ">>> " in path.read_text(encoding="utf-8")
)


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples_pass(module_name: str) -> None:
    failed, attempted, report = run_examples(module_name)
    assert (failed, attempted > 0) == (0, True), report


def test_the_examples_are_found() -> None:
    assert "turnmark.shell.cli.pager" in MODULES

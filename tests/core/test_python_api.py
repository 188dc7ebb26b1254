"""The public Python API: what ``turnmark.core`` exports, and the Python example of docs/python-api.md, run.

The example runs on a copy of ``fixtures/workspace`` in ``tmp_path`` (never on
``fixtures/`` itself) and must print exactly what the page shows after it.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import turnmark.core
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.storage.conversations import read_conversation
from turnmark.shell.storage.locking import is_locked
from turnmark.shell.storage.selection import pick_conversation

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "python-api.md"
CORE = REPO / "core"
FIXTURES = REPO / "fixtures" / "workspace"
SECTION = "# Using turnmark from Python"
CONVERSATION = "17800000040"


def readme_section() -> str:
    """The page the README links for the Python API (its example is run here)."""
    text = PAGE.read_text(encoding="utf-8")
    assert text.startswith(f"{SECTION}\n"), f"docs/python-api.md does not open with {SECTION!r}"
    return text


def fenced_blocks(section: str) -> list[tuple[str, str]]:
    """Each fenced block of the section as (info string, body)."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```$", section, re.S | re.M)]


def readme_example() -> tuple[str, str]:
    """The section's Python block and the plain block that shows what it prints."""
    blocks = fenced_blocks(readme_section())
    code = [body for info, body in blocks if info == "python"]
    shown = [body for info, body in blocks if info == ""]
    assert len(code) == 1, "the section should hold one Python example"
    assert len(shown) == 1, "the section should show what the example prints in one plain block"
    return code[0], shown[0]


# The README example ----------------------------------------------------------------------------


def test_readme_example_prints_what_it_shows_and_labels_under_the_lock(
    tmp_path: Path, user_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, shown = readme_example()
    workspace = tmp_path / "turnmark-py"
    shutil.copytree(FIXTURES, workspace)
    fixture_events = sorted((p, p.read_bytes()) for p in FIXTURES.rglob("*.json"))
    monkeypatch.chdir(workspace)

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "docs/python-api.md", "exec"), {"__name__": "readme_example"})

    assert printed.getvalue() == shown
    ref = pick_conversation(workspace, CONVERSATION)
    assert ref.directories == (workspace / ".jp" / "conversations" / "17800000040-compacted-and-hand-edited",)
    assert not is_locked(ref), "the lock is released after the write"
    reread = read_conversation(ref, sequential_ids()).stream
    turn = turnmark.core.find_turn(reread.turns(), "1")
    assert turn is not None
    assert (turn.id(), turn.summary(), turnmark.core.summary_source(turn)) == (
        "a1turn0",
        "Where JP keeps its locks",
        "user",
    )
    summaries = [t.summary() for t in reread.turns()]
    assert summaries == ["Explore the workspace layout", "Where JP keeps its locks", None, None]
    assert sorted((p, p.read_bytes()) for p in FIXTURES.rglob("*.json")) == fixture_events, "fixtures/ is untouched"


def test_readme_example_imports_only_public_names() -> None:
    code, _ = readme_example()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module == "turnmark.core":
            for alias in node.names:
                assert alias.name in turnmark.core.__all__, f"{alias.name} is not exported by turnmark.core"


def test_the_shell_entry_points_the_readme_names_exist() -> None:
    named = set(re.findall(r"`(turnmark\.shell(?:\.\w+)+)`", readme_section()))
    assert {
        "turnmark.shell.storage.selection.pick_conversation",
        "turnmark.shell.storage.conversations.read_conversation",
        "turnmark.shell.storage.conversations.edit_conversation",
        "turnmark.shell.entropy.random_event_ids",
    } <= named
    for dotted in sorted(named):
        module, name = dotted.rsplit(".", 1)
        assert hasattr(importlib.import_module(module), name), dotted


# The exported names ----------------------------------------------------------------------------

EXPORTS: dict[str, str] = turnmark.core.public_names()


def type_checking_imports() -> dict[str, str]:
    """What core/__init__.py imports under ``if TYPE_CHECKING:`` (what mypy sees): name -> module."""
    tree = ast.parse((CORE / "__init__.py").read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.AnnAssign):
                    continue  # ``__all__: list[str]``, served by __getattr__
                assert isinstance(statement, ast.ImportFrom)
                assert statement.level == 1
                assert statement.module
                for alias in statement.names:
                    assert alias.asname == alias.name, f"{alias.name} is re-exported under its own name only"
                    found[alias.name] = statement.module
    return found


def test_all_is_the_lazy_table_and_what_mypy_sees() -> None:
    assert turnmark.core.__all__ == sorted(set(turnmark.core.__all__)), "__all__ is sorted, without repeats"
    assert set(turnmark.core.__all__) == set(EXPORTS)
    assert type_checking_imports() == EXPORTS
    assert len(EXPORTS) == 47


def test_every_export_resolves_to_its_own_object() -> None:
    for name, module in EXPORTS.items():
        expected = getattr(importlib.import_module(f"turnmark.core.{module}"), name)
        assert getattr(turnmark.core, name) is expected, name
    assert set(turnmark.core.__all__) <= set(dir(turnmark.core))
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = turnmark.core.nothing_here  # type: ignore[attr-defined]


def test_no_export_is_shadowed_by_a_submodule() -> None:
    """Importing ``turnmark.core.X`` sets the package attribute ``X`` to the module, hiding a lazy export ``X``."""
    submodules = {path.stem for path in CORE.glob("*.py")} | {path.name for path in CORE.iterdir() if path.is_dir()}
    assert not submodules & set(EXPORTS)


def test_importing_the_package_imports_no_core_module() -> None:
    """``import turnmark.core.<module>`` runs core/__init__.py first: it must stay cheap (CLI start-up)."""
    probe = (
        "import sys, turnmark.core\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('turnmark', 'msgspec', 'returns', 'pyrsistent', 'yaml', 'hashlib', 'json')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['turnmark', 'turnmark.core']"


def test_star_import_gives_the_public_names() -> None:
    namespace: dict[str, object] = {}
    exec("from turnmark.core import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(turnmark.core.__all__)

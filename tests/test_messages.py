"""Every message the code can print, listed in one place: what is raised, failed with or said on stderr.

The catalogue is read from the source (each ``raise X("...")``, ``fail("...")`` and ``chrome("...")``
with its f-string holes shown as ``{...}``), snapshot-tested so a reviewer reads every message top to
bottom, and held to the house rule that no message names an internal document (RFD numbers, draft names).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from syrupy.assertion import SnapshotAssertion

ROOT = Path(__file__).resolve().parents[1]
SAYING = frozenset({"fail", "chrome", "warn", "note"})
PREFIXED = {"note": "note: "}
"""Sayers that put a prefix of their own before the message."""
INTERNAL = re.compile(r"\bRFD\b|\bD\d\d\b")


def _template(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                parts.append("{" + ast.unparse(value.value) + "}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _template(node.left), _template(node.right)
        return None if left is None or right is None else left + right
    return None


def _called(call: ast.Call) -> str:
    function = call.func
    return (
        function.id if isinstance(function, ast.Name) else function.attr if isinstance(function, ast.Attribute) else ""
    )


def messages() -> list[str]:
    """``path: template`` for every message literal at a raise, ``fail`` or ``chrome`` site in core/ and shell/."""
    found: list[str] = []
    for path in sorted([*(ROOT / "core").rglob("*.py"), *(ROOT / "shell").rglob("*.py")]):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            call = node.exc if isinstance(node, ast.Raise) else node if isinstance(node, ast.Call) else None
            if not isinstance(call, ast.Call) or not call.args:
                continue
            if isinstance(node, ast.Call) and _called(call) not in SAYING:
                continue
            template = _template(call.args[0])
            if template is not None:
                prefix = PREFIXED.get(_called(call), "") if isinstance(node, ast.Call) else ""
                found.append(f"{path.relative_to(ROOT)}: {prefix}{' '.join(template.split())}")
    return found


def test_every_message_listed_in_one_place(snapshot: SnapshotAssertion) -> None:
    assert messages() == snapshot


def test_the_catalogue_finds_the_messages_it_claims() -> None:
    listed = messages()
    assert len(listed) > 150
    assert any("is locked" in line for line in listed)
    assert any(line.startswith("shell/cli/") for line in listed)


def test_no_message_names_an_internal_document() -> None:
    assert [line for line in messages() if INTERNAL.search(line.split(": ", 1)[1])] == []

"""core/ stays pure: no I/O, clock, randomness, environment, threads, terminal or shell imports."""

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "core"
FORBIDDEN = {
    "os",
    "io",
    "sys",
    "time",
    "random",
    "secrets",
    "socket",
    "subprocess",
    "threading",
    "asyncio",
    "pathlib",
    "shutil",
    "tempfile",
    "fcntl",
    "signal",
    "logging",
    "httpx",
    "watchdog",
    "typer",
    "rich",
    "shell",
    "turnmark",
}


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")), ids=lambda p: str(p.relative_to(CORE)))
def test_core_module_imports_nothing_impure(path: Path) -> None:
    bad = {
        name
        for name in imported_modules(path)
        if name.split(".")[0] in FORBIDDEN and not (name == "turnmark.core" or name.startswith("turnmark.core."))
    }
    assert not bad, f"{path.relative_to(CORE)} imports {sorted(bad)}"


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import os\nfrom time import sleep\nfrom . import fine\n")
    assert imported_modules(sample) == {"os", "time"}

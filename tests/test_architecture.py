"""The import rules of docs/architecture.md: core is pure and layered, the shell's wings never import the CLI.

Imports are read from the source (top-level and in-function, ``TYPE_CHECKING`` included), so an arrow cannot
hide inside a function.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE_LAYERS = ("errors", "text", "stream", "links", "summaries", "search", "wire", "editing", "rendering")
"""Core packages from the bottom up: each may import the ones before it, never one after it."""
SHELL_LAYERS = {
    "errors": 0,
    "secrets": 0,
    "entropy": 0,
    "clock": 0,
    "collector": 0,
    "interrupts": 0,
    "output": 0,
    "settings": 0,
    "lazy": 0,
    "version": 0,
    "storage": 1,
    "providers": 1,
    "usecases": 2,
    "cli": 3,
    "plugins": 4,
}
"""Shell wings by level: the root modules, then storage and providers (apart), the use cases, the CLI, and the
JP plugins that run it on top."""
IMPURE = frozenset(
    (
        *("os", "io", "sys", "time", "random", "secrets", "socket", "subprocess", "threading", "asyncio"),
        *("pathlib", "shutil", "tempfile", "fcntl", "signal", "logging", "httpx", "watchdog", "typer", "rich"),
    )
)


def modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def dotted(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return "turnmark." + ".".join(parts)


def imports_of(path: Path, name: str | None = None) -> set[str]:
    """Every module ``path`` (the module ``name``) imports, relative imports resolved, wherever they stand."""
    found: set[str] = set()
    name = name or dotted(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def layer_of(module: str, package: str, layers: Collection[str]) -> str | None:
    """The layer (first part below ``turnmark.<package>``) a module belongs to, if it is one of ``layers``."""
    prefix = f"turnmark.{package}."
    layer = module[len(prefix) :].split(".", maxsplit=1)[0] if module.startswith(prefix) else ""
    return layer if layer in layers else None


def core_violations(name: str, imported: set[str]) -> set[str]:
    """Impure imports, shell imports, and imports of a core package above ``name``'s own."""
    wrong = {m for m in imported if m.split(".")[0] in IMPURE or m.startswith("turnmark.shell")}
    own = layer_of(name, "core", CORE_LAYERS)
    if own is not None:
        rank = CORE_LAYERS.index(own)
        wrong |= {
            m for m in imported if (layer := layer_of(m, "core", CORE_LAYERS)) and CORE_LAYERS.index(layer) > rank
        }
    return wrong


def shell_violations(name: str, imported: set[str]) -> set[str]:
    """Imports of a wing at ``name``'s level or above (root modules may import each other)."""
    own = layer_of(name, "shell", SHELL_LAYERS)
    if own is None:
        return set()
    level = SHELL_LAYERS[own]
    wrong = set()
    for module in imported:
        layer = layer_of(module, "shell", SHELL_LAYERS)
        if layer is None or layer == own:
            continue
        if SHELL_LAYERS[layer] > level or (SHELL_LAYERS[layer] == level and level > 0):
            wrong.add(module)
    return wrong


@pytest.mark.parametrize("path", modules("core"), ids=lambda p: str(p.relative_to(ROOT)))
def test_core_imports_nothing_impure_and_nothing_above_its_package(path: Path) -> None:
    name = dotted(path)
    if path.parent != ROOT / "core":
        assert layer_of(name, "core", CORE_LAYERS), f"{path.relative_to(ROOT)} is in no core package {CORE_LAYERS}"
    wrong = core_violations(name, imports_of(path))
    assert not wrong, f"{path.relative_to(ROOT)} imports {sorted(wrong)}"


@pytest.mark.parametrize("path", modules("shell"), ids=lambda p: str(p.relative_to(ROOT)))
def test_shell_wings_import_nothing_at_or_above_their_level(path: Path) -> None:
    name = dotted(path)
    if path != ROOT / "shell" / "__init__.py":
        assert layer_of(name, "shell", SHELL_LAYERS), f"{path.relative_to(ROOT)} is in no shell wing"
    wrong = shell_violations(name, imports_of(path))
    assert not wrong, f"{path.relative_to(ROOT)} imports {sorted(wrong)}"


def test_no_module_name_is_in_both_packages() -> None:
    """``errors`` is the one exception, by design: each package has its one error family there."""
    core = {path.stem for path in modules("core")} - {"__init__"}
    shell = {path.stem for path in modules("shell")} - {"__init__"}
    packages = {path.name for path in (ROOT / "core").iterdir() if (path / "__init__.py").exists()}
    assert (core | packages) & shell == {"errors"}


def test_the_rules_catch_a_wrong_arrow(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os\nfrom turnmark.core.stream import codec\n\n\ndef late():\n"
        "    from ..summaries import packing\n    from turnmark.shell.cli import main\n"
    )
    imported = imports_of(sample, "turnmark.core.links.sample")
    assert {"os", "turnmark.core.stream.codec", "turnmark.core.summaries.packing"} <= imported
    assert core_violations("turnmark.core.links.sample", imported) == {
        "os",
        "turnmark.core.summaries",
        "turnmark.core.summaries.packing",
        "turnmark.shell.cli",
        "turnmark.shell.cli.main",
    }
    assert shell_violations("turnmark.shell.storage.sample", {"turnmark.shell.cli.main"}) == {"turnmark.shell.cli.main"}
    assert shell_violations("turnmark.shell.storage.sample", {"turnmark.shell.providers.http"}) != set()
    assert shell_violations("turnmark.shell.usecases.sample", {"turnmark.shell.providers.http"}) == set()


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A path that comes back to where it started, or ``None``."""
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*path, node, target]
            if target not in state and (found := visit(target, [*path, node])) is not None:
                return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node, [])) is not None:
            return found
    return None


def test_no_two_shell_modules_import_each_other_even_for_types() -> None:
    """Issue 40: no import circle in the shell (``storage/conversations.py`` and ``storage/undo.py`` had one),
    counting the imports made only for type checking."""
    names = {dotted(path): path for path in modules("shell")}
    graph = {name: {module for module in imports_of(path) if module in names and module != name}
             for name, path in names.items()}  # fmt: skip
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_cycle_finder_finds_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_command_function_is_over_fifty_lines() -> None:
    """Issue 40: a CLI function reads on one screen (its options included)."""
    long = [
        f"{path.name}:{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path in modules("shell/cli")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.end_lineno is not None and node.end_lineno - node.lineno >= 50
    ]
    assert long == []

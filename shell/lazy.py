"""The shell's one lazy boundary: modules loaded when they are first used, not when imported.

Each CLI command module imports the use cases and core it runs inside one ``with lazy_imports():``
block at its top (the provider base does the same for the HTTP client). A module imported there
(``from package import module``, never a name) is created at once and executed when one of its
attributes is first read, so ``turnmark --help`` and the light commands do not pay for the stream
code, HTTP client, watcher or progress bars they never run (tests/shell/cli/test_startup.py).
Packages on the way, and modules already loaded, import as usual.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.machinery import ModuleSpec
from types import ModuleType


class _DeferringFinder:
    """Finds a module with the finders after it and defers executing it (packages excepted)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is None:
                continue
            if spec.submodule_search_locations is None and hasattr(spec.loader, "exec_module"):
                spec.loader = importlib.util.LazyLoader(spec.loader)  # type: ignore[arg-type]
            return spec
        return None


@contextmanager
def lazy_imports() -> Iterator[None]:
    """Defer executing the modules imported in this block until first use."""
    finder = _DeferringFinder()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


def executed(name: str) -> bool:
    """Whether module ``name`` has run (imported and not still waiting behind the lazy boundary)."""
    module = sys.modules.get(name)
    return module is not None and not isinstance(module, importlib.util._LazyModule)  # type: ignore[attr-defined]

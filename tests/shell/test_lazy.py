"""The lazy boundary: a module imported in ``lazy_imports()`` runs on first use, and a wrong name fails at once."""

import subprocess
import sys
import textwrap


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False)


def test_a_module_imported_lazily_runs_when_an_attribute_is_first_read() -> None:
    done = run(
        """
        from turnmark.shell.lazy import executed, lazy_imports
        with lazy_imports():
            from turnmark.core.links import check
        print(executed("turnmark.core.links.check"), executed("turnmark.core.links.exclusion"))
        print(callable(check.check_report))
        print(executed("turnmark.core.links.check"), executed("turnmark.core.links.exclusion"))
        """
    )
    assert done.stdout.split("\n") == ["False False", "True", "True True", ""], done.stderr


def test_imports_after_the_block_are_not_deferred() -> None:
    done = run(
        """
        from turnmark.shell.lazy import executed, lazy_imports
        with lazy_imports():
            pass
        from turnmark.core.links import check
        print(executed("turnmark.core.links.check"))
        """
    )
    assert done.stdout == "True\n", done.stderr


def test_a_module_that_does_not_exist_fails_at_the_import() -> None:
    done = run(
        """
        from turnmark.shell.lazy import lazy_imports
        with lazy_imports():
            from turnmark.core.links import no_such_module
        """
    )
    assert done.returncode == 1
    assert "ImportError: cannot import name 'no_such_module'" in done.stderr

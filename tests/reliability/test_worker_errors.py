"""A worker's error ends a run on every CPython turnmark supports (issue 34, no hang).

CPython before 3.11.3 (Debian 12's ``/usr/bin/python3`` is 3.11.2) can leave a process pool's shutdown waiting
for ever when an item handed to it is cancelled (python/cpython#94440). ``worker_pool`` cancelled the items
left after an error or a Ctrl-C and so hung about one run in twenty there. This runs the pool many times under
such an interpreter (the system's, when it is one), with turnmark's sources on its path.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO

PROBE = (
    "a worker's error under CPython 3.11.2 (python/cpython#94440: a cancelled item can hang the pool's shutdown)",
    "{cases} interpreter(s): 60 runs each of an error in one of two workers",
    "every run ends with the worker's error (120 s guard)",
)
"""This module's row in docs/reliability.md (``conftest.py``)."""
RUNS = 60
CHILD = textwrap.dedent(
    """
    import sys

    def refuse(item):
        if item == 7:
            raise ValueError("seven")
        return item

    if __name__ == "__main__":
        import child
        from turnmark.shell.usecases import worker_pool

        for _ in range(int(sys.argv[1])):
            try:
                list(worker_pool.results(child.refuse, range(40), 2))
            except ValueError as error:
                assert str(error) == "seven", error
            else:
                raise AssertionError("the worker's error did not reach the caller")
        print("ended")
    """
)


def affected_interpreters() -> list[str]:
    """The system's Python 3 interpreters older than 3.11.3 (and at least 3.11, which turnmark needs)."""
    found = []
    for name in ("python3", "python3.11"):
        for folder in ("/usr/bin", "/usr/local/bin"):
            path = Path(folder) / name
            if not path.is_file():
                continue
            done = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
            match = re.fullmatch(r"Python (\d+)\.(\d+)\.(\d+)\s*", done.stdout)
            if match and (3, 11, 0) <= tuple(map(int, match.groups())) < (3, 11, 3):
                found.append(str(path.resolve()))
    return sorted(set(found))


@pytest.mark.parametrize(
    "interpreter",
    affected_interpreters()
    or [pytest.param(None, marks=pytest.mark.skip(reason="no CPython 3.11.0-3.11.2 on this machine to run it on"))],
)
def test_an_error_in_a_worker_ends_the_run(interpreter: str, tmp_path: Path) -> None:
    package = tmp_path / "path" / "turnmark"
    package.mkdir(parents=True)
    for wing in ("core", "shell"):
        (package / wing).symlink_to(REPO / wing)
    (tmp_path / "path" / "child.py").write_text(CHILD)
    process = subprocess.Popen(
        [interpreter, str(tmp_path / "path" / "child.py"), str(RUNS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path / "path",
        env={"PYTHONPATH": str(tmp_path / "path"), "PATH": "/usr/bin:/bin"},
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f"the pool was still waiting 120 s on; it printed {out!r}")
    assert (process.returncode, out) == (0, "ended\n"), err[-2000:]

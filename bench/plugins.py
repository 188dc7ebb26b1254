"""``jp turns`` as JP runs it: the ``jp-turns`` plugin driven by the test host (``tests/shell/plugins/host.py``:
spawn, ``init``, every message checked, ``exit``) against ``turnmark turns`` as a process, in the same run.

Each try runs both, one after the other, on the same copy; the better of ``--tries`` is kept for each. The
target is a ratio of at most 1.2x. Run: ``just bench`` or ``python bench/plugins.py``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import with_bytecode  # noqa: E402
from tests.shell.plugins.host import BIN, Host, init_message, plugin_env  # noqa: E402

TARGET = 1.2


def best_pair(root: Path, env: dict[str, str], conversation: str, tries: int) -> tuple[float, float]:
    """The best wall-clock seconds of the plugin through the host and of ``turnmark turns``."""
    plugin, direct = [], []
    command = [str(BIN / "turnmark"), "--workspace", str(root), "turns", conversation]
    for _ in range(tries):
        started = time.perf_counter()
        run = Host("turns", env, workspace=root).init(init_message(root, [conversation]))
        plugin.append(time.perf_counter() - started)
        started = time.perf_counter()
        shown = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        direct.append(time.perf_counter() - started)
        assert run.printed == shown.stdout, "the plugin printed what turnmark prints"
    return min(plugin), min(direct)


def main() -> None:
    with_bytecode()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tries", type=int, default=9)
    options = parser.parse_args()
    corpus = Path(REPO.parent / "shared" / "corpus")
    with tempfile.TemporaryDirectory() as scratch:
        env = plugin_env(Path(scratch) / "home")
        cases = []
        fixtures = Path(scratch) / "fixtures"
        shutil.copytree(REPO / "fixtures" / "workspace", fixtures)
        cases.append(("a fixture conversation (4 turns)", fixtures, "17800000040"))
        if (corpus / ".jp" / "conversations").is_dir():
            copy = Path(scratch) / "corpus"
            shutil.copytree(corpus, copy)
            biggest = max((copy / ".jp" / "conversations").iterdir(), key=lambda d: (d / "events.json").stat().st_size)
            cases.append((f"the corpus's largest conversation ({biggest.name.split('-')[0]})", copy, biggest.name))
        for name, root, conversation in cases:
            plugin, direct = best_pair(root, env, conversation, options.tries)
            ratio = plugin / direct
            verdict = "met" if ratio <= TARGET else "NOT met"
            print(
                f"jp-turns through the host / turnmark turns, {name}: {plugin * 1000:.0f} ms / {direct * 1000:.0f} ms"
                f" = {ratio:.2f}x (target <= {TARGET}x: {verdict})"
            )


if __name__ == "__main__":
    main()

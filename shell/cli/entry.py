"""The ``turnmark`` console script: Ctrl-C at any moment ends the run with status 130 and no traceback.

This module imports nothing of turnmark at its top, so that a Ctrl-C while the commands are still being
imported (most of a short run's start-up) is caught here too; ``--version`` alone is answered without them.
Once Ctrl-C was pressed, an error that follows is its consequence (a module cut short in its import, a pool
stopped while it started) and ends the run with the same status; a Ctrl-C while the interpreter shuts down
ends it at once.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any

INTERRUPTED = 130
"""The exit status of a run ended by Ctrl-C (128 + SIGINT), as shells report it."""

_pressed: list[int] = []


def _interrupt(signum: int, frame: object) -> None:
    _pressed.append(signum)
    raise KeyboardInterrupt


def _end_now(signum: int, frame: object) -> None:
    os._exit(INTERRUPTED)


Handler = Callable[[int, Any], Any] | signal.Handlers


def status(argv: Sequence[str] | None = None, afterwards: Handler = _end_now) -> int:
    """Run the command line ``argv`` (default: ``sys.argv``) and return its exit status (130 after Ctrl-C);
    ``afterwards`` is what a Ctrl-C does once it has ended (by default: end the process at once)."""
    signal.signal(signal.SIGINT, _interrupt)
    words = sys.argv[1:] if argv is None else list(argv)
    try:
        if words == ["--version"]:
            return _version()
        from turnmark.shell.cli.main import main as run

        run(argv)
    except SystemExit as ended:
        if ended.code is None or isinstance(ended.code, int):
            return ended.code or 0
        sys.stderr.write(f"{ended.code}\n")
        return 1
    except KeyboardInterrupt:
        return INTERRUPTED
    except Exception:
        if _pressed:
            return INTERRUPTED
        raise
    finally:
        signal.signal(signal.SIGINT, afterwards)
    return 0


def _version() -> int:
    """``turnmark --version`` alone: answered before the commands are imported."""
    from turnmark.shell.version import VERSION

    sys.stdout.write(f"turnmark {VERSION}\n")
    return 0


def main() -> None:
    """Run the command line named by ``sys.argv``; what is still alive then is frozen, so the collections
    Python makes as it ends do not walk it (a read of a long conversation leaves millions of objects)."""
    code = status()
    gc.freeze()
    sys.exit(code)

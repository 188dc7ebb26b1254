"""The ``turnmark`` console script: Ctrl-C at any moment ends the run with status 130 and no traceback.

This module imports nothing of turnmark at its top, so that a Ctrl-C while the commands are still being
imported (most of a short run's start-up) is caught here too. Once Ctrl-C was pressed, an error that
follows is its consequence (a module cut short in its import, a pool stopped while it started) and ends
the run with the same status; a Ctrl-C while the interpreter shuts down ends it at once.
"""

from __future__ import annotations

import os
import signal
import sys

INTERRUPTED = 130
"""The exit status of a run ended by Ctrl-C (128 + SIGINT), as shells report it."""

_pressed: list[int] = []


def _interrupt(signum: int, frame: object) -> None:
    _pressed.append(signum)
    raise KeyboardInterrupt


def _end_now(signum: int, frame: object) -> None:
    os._exit(INTERRUPTED)


def main() -> None:
    """Run the command line named by ``sys.argv``."""
    signal.signal(signal.SIGINT, _interrupt)
    try:
        from turnmark.shell.cli.main import main as run

        run()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, _end_now)
        sys.exit(INTERRUPTED)
    except Exception:
        signal.signal(signal.SIGINT, _end_now)
        if _pressed:
            sys.exit(INTERRUPTED)
        raise
    finally:
        signal.signal(signal.SIGINT, _end_now)

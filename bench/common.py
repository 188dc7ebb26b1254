"""Benchmark helpers: the corpus location and a noise-resistant timer."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def with_bytecode() -> None:
    """Write the bytecode of turnmark's modules, as an installed tool has it. With ``PYTHONDONTWRITEBYTECODE``
    set (as on some machines), a module changed since its bytecode was written is compiled again by every
    process: about 60 ms more for a command's start-up, which the rows timing whole processes would count."""
    import compileall

    for package in ("core", "shell"):
        compileall.compile_dir(REPO / package, quiet=1)


def corpus_root() -> Path | None:
    """The corpus folder (holding ``.jp/conversations``), or ``None`` when it is absent."""
    root = Path(os.environ.get("TURNMARK_CORPUS") or REPO.parent / "shared" / "corpus")
    return root if (root / ".jp" / "conversations").is_dir() else None


def corpus_conversations() -> list[Path]:
    """The corpus conversations, or exit with a clear message when the corpus is absent."""
    root = Path(os.environ.get("TURNMARK_CORPUS") or REPO.parent / "shared" / "corpus")
    conversations = root / ".jp" / "conversations"
    if not conversations.is_dir():
        sys.exit(f"corpus not found at {root} (set TURNMARK_CORPUS to a folder holding .jp/conversations)")
    return sorted(path for path in conversations.iterdir() if path.is_dir() and not path.name.startswith("."))


def largest_conversation() -> Path | None:
    """The corpus conversation with the largest ``events.json`` (``None``, said on stdout, without a corpus)."""
    conversations = corpus_conversations()
    if not conversations:
        print("corpus not found (set TURNMARK_CORPUS); only the synthetic conversation is measured")
        return None
    return max(conversations, key=lambda d: (d / "events.json").stat().st_size)


def corpus_files(directory: Path) -> tuple[bytes, bytes | None]:
    """A conversation's ``events.json`` and ``base_config.json`` (``None`` when absent)."""
    base = directory / "base_config.json"
    return (directory / "events.json").read_bytes(), base.read_bytes() if base.exists() else None


def best_of(function: Callable[[], object], repeat: int = 7, number: int = 5) -> float:
    """The fastest of ``repeat`` runs of ``number`` calls, per call, in seconds."""
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            function()
        timings.append((time.perf_counter() - start) / number)
    return min(timings)

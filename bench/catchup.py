"""Catch-up of long unsummarized conversations (issue 24): linear in the turns it writes.

Generates conversations of 1,000 and 10,000 unsummarized turns, in the current format (IDs,
``turn_start`` entries, ``base_config.json``) and the legacy one (no IDs, a leading ``config_delta``, no
``turn_start`` on the first turn), and measures, in process, in the same run:

- offline ``summarize`` (``builtin/extractive``) of the 1,000-turn conversation against a plain read +
  write of it (turnmark reads and parses it and writes it back unchanged; ``msgspec`` alone is printed
  for scale): target <= 10x;
- growth from 1,000 to 10,000 turns of ``summarize --dry-run`` and of a real offline ``summarize``, for
  both formats: target <= 11x (10x the turns).

Each row prints its label, measured value, ratio, target and whether it is met. Times are the best of
``--repeat`` runs (default 3). Run: ``python bench/catchup.py [--quick]``
(``--quick``: 300 and 3,000 turns).
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.collector import collector_paused
from turnmark.shell.storage.conversations import read_conversation
from turnmark.shell.storage.workspace import ConversationRef, list_conversations, require_workspace
from turnmark.shell.usecases.catchup_report import CatchupOptions
from turnmark.shell.usecases.summarize import catch_up

TS = "2026-06-01 10:{:02d}:{:02d}.{:06d}"
CONVERSATION = "17900000000"
WORDS = (  # noqa: SIM905
    "parser lexer token stream buffer cache index schema migration router handler session cookie "
    "config loader plugin registry queue worker scheduler retry timeout socket client server request "
    "response header payload encoder decoder checksum snapshot fixture benchmark profile allocator "
    "iterator closure trait module crate package version release changelog storage journal lock"
).split()
VERBS = "Fix Add Refactor Rename Remove Document Test Optimize Split Merge Explain Review".split()  # noqa: SIM905
FILES = ["src/main.rs", "src/parser.rs", "src/cache.rs", "lib/index.py", "docs/design.md", "tests/test_io.py"]


def _timestamp(n: int) -> str:
    return TS.format((n // 60) % 60, n % 60, n % 1_000_000)


def _turn(n: int, rng: random.Random, *, ids: bool, start: bool) -> list[dict[str, object]]:
    """One coding turn: a request, reasoning, a tool call and its result, an answer (about 2 kB)."""
    subject = " ".join(rng.sample(WORDS, 3))
    path = rng.choice(FILES)
    request = f"{rng.choice(VERBS)} the {subject} in {path} so that step {n} works. " + " ".join(
        rng.choice(WORDS) for _ in range(30)
    )
    answer = f"Done: the {subject} is changed in `{path}`. " + " ".join(rng.choice(WORDS) for _ in range(60)) + "."
    output = base64.b64encode((f"fn step_{n}() {{}}\n" * 40).encode()).decode()
    arguments = {"path": base64.b64encode(path.encode()).decode()}
    timestamp = _timestamp(n)
    entries: list[dict[str, object]] = []
    if start:
        entries.append({"timestamp": timestamp, "type": "turn_start"})
    entries += [
        {"timestamp": timestamp, "type": "chat_request", "content": request},
        {"timestamp": timestamp, "type": "chat_response", "reasoning": "Looking at the code first. " * 8},
        {
            "timestamp": timestamp,
            "type": "tool_call_request",
            "id": f"call{n}",
            "name": "fs_read_file",
            "arguments": arguments,
        },
        {"timestamp": timestamp, "type": "tool_call_response", "id": f"call{n}", "content": output, "is_error": False},
        {"timestamp": timestamp, "type": "chat_response", "message": answer},
    ]
    if ids:
        request_id = f"r{n}"
        for index, entry in enumerate(entries):
            entry["event_id"] = request_id if entry["type"] == "chat_request" else f"e{n}x{index}"
            if entry["type"] not in ("turn_start", "chat_request"):
                entry["request_id"] = request_id
    return entries


def long_conversation(turns: int, *, legacy: bool = False, seed: int = 24) -> tuple[bytes, bytes | None]:
    """``events.json`` and ``base_config.json`` (``None`` for the legacy format) of ``turns`` unsummarized turns.

    Legacy: no event IDs, a leading ``config_delta`` holding the base config, no ``turn_start`` on the
    first turn (catch-up inserts it); current: IDs on every entry and a ``turn_start`` opening every turn.
    """
    rng = random.Random(seed)
    base = {"assistant": {"model": {"id": "anthropic/claude-sonnet-4"}}}
    entries: list[dict[str, object]] = []
    if legacy:
        entries.append({"type": "config_delta", "timestamp": _timestamp(0), "delta": base})
    for n in range(turns):
        entries += _turn(n, rng, ids=not legacy, start=not (legacy and n == 0))
    events = msgspec.json.format(msgspec.json.encode(entries), indent=2) + b"\n"
    return events, None if legacy else msgspec.json.format(msgspec.json.encode(base), indent=2) + b"\n"


def make_workspace(root: Path, events: bytes, base_config: bytes | None) -> ConversationRef:
    """A workspace at ``root`` holding one conversation with these files, its model the offline summarizer."""
    if root.exists():
        shutil.rmtree(root)
    folder = root / ".jp" / "conversations" / CONVERSATION
    folder.mkdir(parents=True)
    (root / ".jp" / "config.toml").write_text('[conversation.turn_summary.generate.model]\nid = "builtin/extractive"\n')
    (folder / "metadata.json").write_text('{"last_activated_at": "2026-06-01 10:00:00.0"}\n')
    (folder / "events.json").write_bytes(events)
    if base_config is not None:
        (folder / "base_config.json").write_bytes(base_config)
    (ref,) = _conversations(root)
    return ref


def _conversations(root: Path) -> list[ConversationRef]:
    return list_conversations(require_workspace(root))


def summarize(ref: ConversationRef, *, dry_run: bool) -> None:
    report = catch_up(ref, CatchupOptions(environ={}, dry_run=dry_run), sequential_ids("b"))
    if report.error or report.skipped:
        sys.exit(f"catch-up failed: {report.error or report.skipped}")


def plain_read_write(ref: ConversationRef, target: Path) -> None:
    """The floor: turnmark reads the conversation (the bytes, parsed, IDs derived) and writes it back unchanged,
    with the cycle collector paused as catch-up pauses it."""
    with collector_paused():
        loaded = read_conversation(ref, sequential_ids("p"))
        target.write_bytes(loaded.stream.upgraded().to_json())


def msgspec_read_write(path: Path, target: Path) -> None:
    """For scale: the bytes read, decoded and encoded by ``msgspec`` alone, and written."""
    document = msgspec.json.decode(path.read_bytes())
    target.write_bytes(msgspec.json.format(msgspec.json.encode(document), indent=2))


def best(run: Callable[[], object], repeat: int, prepare: Callable[[], object] = lambda: None) -> float:
    """The fastest of ``repeat`` runs of ``run``, each after ``prepare`` (not timed)."""
    timings = []
    for _ in range(repeat):
        prepare()
        start = time.perf_counter()
        run()
        timings.append(time.perf_counter() - start)
    return min(timings)


def row(label: str, value: str, ratio: float, target: float) -> None:
    verdict = "met" if ratio <= target else "NOT met"
    print(f"{label:<58} {value:>10} {ratio:>7.2f}x  target <= {target:g}x  {verdict}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 and 3,000 turns")
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    small, large = (300, 3000) if arguments.quick else (1000, 10_000)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        os.environ["JP_USER_DATA_DIR"] = str(root / "user")
        timings: dict[tuple[str, int, str], float] = {}
        for legacy in (False, True):
            form = "legacy" if legacy else "current"
            for turns in (small, large):
                events, base_config = long_conversation(turns, legacy=legacy)
                workspace = root / f"{form}-{turns}"
                repeat = arguments.repeat

                def fresh(events: bytes = events, base: bytes | None = base_config, at: Path = workspace) -> None:
                    make_workspace(at, events, base)

                fresh()
                (ref,) = _conversations(workspace)
                timings[(form, turns, "dry")] = best(partial(summarize, ref, dry_run=True), repeat)
                timings[(form, turns, "real")] = best(partial(summarize, ref, dry_run=False), repeat, fresh)
                timings[(form, turns, "plain")] = best(partial(plain_read_write, ref, root / "copy.json"), repeat)
                if turns == small and not legacy:
                    scratch_copy = root / "copy.json"
                    floor = best(partial(plain_read_write, ref, scratch_copy), 5)
                    bare = best(partial(msgspec_read_write, ref.directories[0] / "events.json", scratch_copy), 5)
                    size = len(events) / 1e6
                    seconds = timings[(form, turns, "real")]
                    print(
                        f"plain read + write of the {turns:,}-turn conversation ({size:.1f} MB): {floor * 1000:.0f} ms "
                        f"(msgspec decode + encode + write alone: {bare * 1000:.0f} ms)"
                    )
                    row(
                        f"offline summarize, {turns:,} turns / plain read + write",
                        f"{seconds:.2f} s",
                        seconds / floor,
                        10,
                    )
                shutil.rmtree(workspace)
        for form in ("current", "legacy"):
            plain = timings[(form, large, "plain")] / timings[(form, small, "plain")]
            print(f"for scale, the plain read + write of the {form} conversation grows {plain:.1f}x on this machine")
            for kind, name in (("dry", "summarize --dry-run"), ("real", "offline summarize")):
                grown = timings[(form, large, kind)] / timings[(form, small, kind)]
                row(
                    f"{name}, {form}, {large:,} / {small:,} turns",
                    f"{timings[(form, large, kind)]:.2f} s",
                    grown,
                    11,
                )


if __name__ == "__main__":
    main()

"""Concurrent-writer probe: a JP-like writer, ``turnmark watch`` and a loop of ``summarize``/``label``.

The writer (``jp_writer``) appends a turn every 200 ms under JP's lock and now and
then edits an earlier request and removes its summary. Beside it run ``turnmark
watch --settle 0.2`` and, one after another, ``turnmark summarize`` and
``turnmark label``, all real processes, against a slow loopback model whose
summary names the request version and a hash of the transcript it was shown.
At the end it must show: every entry the writer appended present exactly once,
no duplicate ``event_id``, no edit lost, and no model summary on a turn whose
content differs from what the model was shown.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import subprocess
import sys
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.support.llm_servers import Behaviour, ModelServer, requested_ids

from .figures import record, seconds
from .jp_writer import ids, jp_lock, request_text, writer_workspace
from .processes import TURNMARK, isolated_env, run_turnmark, stop_writer_and_watch

CONVERSATION_ID = 17820000000
MODEL = "ollama/llama3.2:3b"
SOURCE_KEY = "summary_source"
TURN_BLOCK = re.compile(r'<turn id="([^"]*)">\n(.*?)\n</turn>', re.DOTALL)
SUMMARY = re.compile(r"T(\d+)v(\d+) ([0-9a-f]{12})")
REQUEST_TAG = re.compile(r"T(\d+)v(\d+) ")


def digest(request: str, response: str) -> str:
    return hashlib.sha256(f"{request}\n{response}".encode()).hexdigest()[:12]


def _unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")


class SlowModel:
    """A model that takes 0.2-0.6 s and summarizes a turn as ``T<turn>v<version> <hash of what it read>``."""

    def __init__(self) -> None:
        self.rng = random.Random(0)
        self.lock = threading.Lock()
        self.requests = 0

    def __call__(self, body: dict[str, Any]) -> str:
        with self.lock:
            pause = self.rng.uniform(0.2, 0.6)
            self.requests += 1
        time.sleep(pause)
        user = next(message["content"] for message in body["messages"] if message["role"] == "user")
        blocks = dict(TURN_BLOCK.findall(user))
        summaries: dict[str, str] = {}
        for turn_id in requested_ids(body):
            block = blocks.get(turn_id, "")
            request = re.search(r"<request>(.*?)</request>", block, re.DOTALL)
            response = re.search(r"<response>(.*?)</response>", block, re.DOTALL)
            asked = _unescape(request.group(1)) if request else ""
            answered = _unescape(response.group(1)) if response else ""
            tag = REQUEST_TAG.match(asked)
            summaries[turn_id] = f"{tag.group(0) if tag else 'T?v? '}{digest(asked, answered)}"
        return json.dumps({"summaries": summaries})


class Always(deque[Behaviour]):
    """A behaviour queue that never runs out: every request gets the same behaviour."""

    def __init__(self, behaviour: Behaviour) -> None:
        super().__init__()
        self.behaviour = behaviour

    def __bool__(self) -> bool:
        return True

    def popleft(self) -> Behaviour:
        return self.behaviour


@dataclass
class Invocations:
    """The ``summarize``/``label`` loop: exit codes, tracebacks, stale results it dropped."""

    exits: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    dropped: int = 0


def run_loop(workspace: Path, env: dict[str, str], stop: threading.Event, outcome: Invocations) -> None:
    rng = random.Random(1)
    events = workspace / ".jp" / "conversations" / f"{CONVERSATION_ID}-concurrent" / "events.json"
    number = 0
    while not stop.is_set():
        number += 1
        if number % 2:
            args: tuple[str, ...] = ("summarize", str(CONVERSATION_ID))
        else:
            try:
                turns = events.read_bytes().count(b'"turn_start"')
            except OSError as error:
                outcome.problems.append(f"events.json could not be read between runs: {error}")
                turns = 1
            args = ("summary", "set", str(CONVERSATION_ID), str(rng.randrange(max(turns, 1))), f"label {number}")
        done = run_turnmark(workspace, env, args, timeout=120)
        outcome.exits[f"{args[0]} {done.returncode}"] += 1
        outcome.dropped += done.stderr.count("the turn changed while its summary was written")
        if "Traceback" in done.stderr or done.returncode not in (0, 1, 2):
            outcome.problems.append(f"turnmark {' '.join(args)} -> exit {done.returncode}: {done.stderr[-600:]}")


def source_of(entry: dict[str, Any]) -> str | None:
    metadata = entry.get("metadata")
    value = metadata.get(SOURCE_KEY) if isinstance(metadata, dict) else None
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True).decode()
    except ValueError:
        return value


def check_final(entries: list[dict[str, Any]], final: dict[str, Any]) -> tuple[dict[str, list[str]], Counter[str]]:
    """Every problem with the final ``events.json``, by kind, and what the summaries were."""
    problems: dict[str, list[str]] = {
        "lost": [],
        "duplicated": [],
        "duplicate event_ids": [],
        "foreign": [],
        "lost edits": [],
        "stale": [],
    }
    counts = Counter(entry.get("event_id") for entry in entries)
    appended = set(final["appended"])
    problems["lost"] = [event_id for event_id in final["appended"] if counts[event_id] == 0]
    problems["duplicated"] = [event_id for event_id in final["appended"] if counts[event_id] > 1]
    problems["duplicate event_ids"] = [str(event_id) for event_id, count in counts.items() if count > 1]
    problems["foreign"] = [str(event_id) for event_id in counts if event_id not in appended]
    by_id = {entry.get("event_id"): entry for entry in entries}
    kinds: Counter[str] = Counter()
    for turn_text, version in final["versions"].items():
        turn = int(turn_text)
        start, request, response = (by_id.get(event_id, {}) for event_id in ids(turn))
        content, message = request.get("content"), response.get("message")
        if content != request_text(turn, version):
            problems["lost edits"].append(f"turn {turn}: {content!r}, the writer last wrote version {version}")
        summary = start.get("summary")
        if summary is None:
            kinds["none"] += 1
            continue
        source = source_of(start)
        if source == "user":
            kinds["user"] += 1
            continue
        kinds[str(source)] += 1
        matched = SUMMARY.fullmatch(summary)
        expected = digest(str(content), str(message))
        if source != MODEL or matched is None:
            problems["stale"].append(f"turn {turn}: summary {summary!r} from {source!r}")
        elif int(matched.group(1)) != turn or matched.group(3) != expected:
            problems["stale"].append(
                f"turn {turn}: summary {summary!r} was written for version {matched.group(2)}, "
                f"the turn is now {content!r} ({expected})"
            )
    return problems, kinds


def same_lock(workspace: Path, lock: Path, env: dict[str, str]) -> None:
    """turnmark and the writer contend for the same lock: while the writer's lock is held, ``label`` writes nothing."""
    events = workspace / ".jp" / "conversations" / f"{CONVERSATION_ID}-concurrent" / "events.json"
    before = events.read_bytes()
    with jp_lock(lock, Counter()):
        done = subprocess.run(
            [TURNMARK, "--workspace", str(workspace), "summary", "set", str(CONVERSATION_ID), "0", "x"],
            check=False,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode != 0, f"turnmark wrote while the writer held {lock}: {done.stdout}"
    assert "locked" in done.stderr, done.stderr
    assert events.read_bytes() == before


def test_a_jp_like_writer_beside_watch_summarize_and_label(tmp_path: Path) -> None:
    started = time.monotonic()
    duration = seconds(10, 60)
    workspace, directory, lock = writer_workspace(tmp_path, CONVERSATION_ID)
    env = isolated_env(tmp_path / "home")
    same_lock(workspace, lock, env)
    model = SlowModel()
    invocations = Invocations()
    with ModelServer() as server:
        server.queue = Always(Behaviour(content=model))
        (workspace / ".jp" / "config.toml").write_text(
            "[conversation.turn_summary.generate]\nbatch_size = 3\n"
            f'[conversation.turn_summary.generate.model]\nid = "{MODEL}"\n'
            f'[providers.llm.ollama]\nbase_url = "{server.url}"\n'
        )
        watch_log = tmp_path / "watch.log"
        with watch_log.open("w") as log:
            watch = subprocess.Popen(
                [TURNMARK, "watch", "--workspace", str(workspace), "--settle", "0.2"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        writer_log = tmp_path / "writer.log"
        writer: subprocess.Popen[bytes] | None = None
        stop = threading.Event()
        loop = threading.Thread(target=run_loop, args=(workspace, env, stop, invocations), daemon=True)
        try:
            deadline = time.monotonic() + 30
            while "watching" not in watch_log.read_text() and time.monotonic() < deadline:
                assert watch.poll() is None, watch_log.read_text()
                time.sleep(0.05)
            writer_args = ["--seconds", str(duration), "--log", str(writer_log)]
            writer = subprocess.Popen(
                [sys.executable, "-m", "tests.reliability.jp_writer", str(directory), str(lock), *writer_args],
                cwd=REPO,
                env=env,
            )
            loop.start()
            assert writer.wait(timeout=duration + 120) == 0, "the JP-like writer failed"
            stop.set()
            loop.join(timeout=180)
            time.sleep(1.0)
        finally:
            stop.set()
            watch_code = stop_writer_and_watch(writer, watch)

    watched = watch_log.read_text(errors="replace")
    notes = [json.loads(line) for line in writer_log.read_text().splitlines()]
    final = next(note["final"] for note in notes if "final" in note)
    problems, kinds = check_final(json.loads((directory / "events.json").read_bytes()), final)
    problems["went missing during the run"] = [json.dumps(note["missing"]) for note in notes if "missing" in note]
    problems["turnmark invocations"] = invocations.problems
    if watch_code != 0 or "Traceback" in watched:
        problems["watch"] = [f"exit {watch_code}: {watched[-1500:]}"]
    dropped = watched.count("dropped a stale result") + invocations.dropped
    record(
        "concurrent JP-like writer",
        f"{duration:.0f} s: {len(final['versions'])} turns, {len(final['appended'])} entries, "
        f"{final['edits']} edits by the writer; watch, {sum(invocations.exits.values())} summarize/label runs, "
        f"{model.requests} model requests",
        f"{len(problems['lost'])} lost, {len(problems['duplicated'])} duplicated entries, "
        f"{len(problems['duplicate event_ids'])} duplicate event_ids, {len(problems['stale'])} stale summaries, "
        f"{len(problems['lost edits'])} lost edits; at the end {kinds[MODEL]} model summaries, "
        f"{kinds['user']} labels, {kinds['none']} without; {dropped} stale results dropped by turnmark, "
        f"the writer found the lock taken {sum(final['lock_waits'].values())} times",
        "0 lost or duplicated entries, 0 duplicate event_ids, 0 summaries on turns changed after they were summarized",
        started,
        setups=1,
    )
    found = {kind: items for kind, items in problems.items() if items}
    if found:
        lines = [f"{kind} ({len(items)}): " + "; ".join(items[:5]) for kind, items in found.items()]
        pytest.fail("\n".join(lines) + f"\nexit codes: {dict(invocations.exits)}", pytrace=False)

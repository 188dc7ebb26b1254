"""Hostile names: folder names and arguments that are not UTF-8, under several locales and stdout encodings.

The workspace's root, a conversation's folder and a broken conversation's folder carry the bytes
``\\xff\\xfe``, a folder has no UTF-8 at all, and a title is not ASCII. Real ``turnmark`` processes
(stdout a pipe) read it under C.UTF-8, C, POSIX and en_US.UTF-8 (built with ``localedef``), and with
strict UTF-8, ASCII and Latin-1 streams. No run may end in a traceback or another exit than 0, 1 or 2,
or put a raw byte of a name on stdout or stderr; each stream must be in its encoding. Text shows the
bytes as ``\\xff``; JSON parses and gives the name back: a byte that is not UTF-8 is written ``\\udcff``
(Python's surrogateescape), so ``os.fsencode`` of the decoded string is the folder's bytes. Text that
must be UTF-8 (a label, a question, a turn, a model, ``--cfg``) is a one-line usage error naming the
argument (exit 2); a conversation named by such a folder, or by its path, works, and a write refused
there (``events.json`` a link) names the file by the same rule.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.llm_servers import ModelServer

from .figures import FULL
from .hostile_cli import Outcome, Tally, strings
from .processes import TURNMARK, isolated_env

RAW = b"\xff\xfe"
NAME = os.fsdecode(b"17800000010-" + RAW)
"""The conversation's folder as Python names it: ``17800000010-\\udcff\\udcfe``."""
BROKEN = os.fsdecode(b"17800000050-" + RAW)
"""A conversation whose ``events.json`` is not JSON: its error names the folder."""
ROOT = os.fsdecode(b"workspace-" + RAW)
SHOWN = "\\xff\\xfe"
"""How text shows the two bytes."""
PATH = f".jp/conversations/{NAME}"
TITLE = "Backoff — ünïcode ✓"
MODEL = "ollama/llama3.2:3b"
BAD = os.fsdecode(b"\xff")


@dataclass(frozen=True)
class Setup:
    """The locale or stream encoding a run gets, and the encoding its stdout must be in."""

    environ: dict[str, str]
    encoding: str
    needs_locale: bool = False


SETUPS = {
    "C.UTF-8": Setup({"LC_ALL": "C.UTF-8"}, "utf-8"),
    "C": Setup({"LC_ALL": "C"}, "utf-8"),
    "POSIX": Setup({"LC_ALL": "POSIX"}, "utf-8"),
    "en_US.UTF-8": Setup({"LC_ALL": "en_US.UTF-8"}, "utf-8", needs_locale=True),
    "strict-utf-8": Setup({"LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8:strict"}, "utf-8"),
    "ascii-C": Setup({"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}, "ascii"),
    "ascii": Setup({"LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "ascii"}, "ascii"),
    "latin-1": Setup({"LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "latin-1"}, "latin-1"),
}
"""C and POSIX: Python coerces them to UTF-8 (PEP 538, 540), with surrogateescape on stdout; en_US.UTF-8
and strict-utf-8: a stdout that refuses surrogates; ascii-C: C without that coercion."""


@dataclass(frozen=True)
class Read:
    args: tuple[str, ...]
    holds: tuple[str, ...] = ()
    """Strings its JSON must give back unchanged (as a value or inside one)."""
    formats: tuple[str, ...] = ("text", "json")
    every_conversation: bool = False
    """It reads every conversation: its text shows the bytes (the broken conversation's error names its
    folder) and it may exit 1 or 2 for that conversation; a read of one conversation must exit 0."""


CONVERSATION = (NAME, TITLE)
READS = {
    "conversations": Read(("conversations",), (*CONVERSATION, ROOT, BROKEN), every_conversation=True),
    "check-all": Read(("check", "--all"), (*CONVERSATION, BROKEN), every_conversation=True),
    "turns": Read(("turns", NAME), CONVERSATION),
    "turns-by-path": Read(("turns", PATH), CONVERSATION),
    "check": Read(("check", NAME), CONVERSATION),
    "transcript": Read(("transcript", PATH), CONVERSATION),
    "project": Read(("project", NAME), CONVERSATION),
    "project-openai": Read(("project", NAME, "--provider", "openai")),
    "show": Read(("show", NAME), CONVERSATION, formats=("text", "md", "html", "json")),
    "show-by-path": Read(("show", PATH), CONVERSATION),
    "summarize-dry-run": Read(("summarize", NAME, "--dry-run")),
    "summarize-all-dry-run": Read(("summarize", "--all", "--dry-run"), (BROKEN,), every_conversation=True),
    "summarize-all-dry-run-offline": Read(
        ("summarize", "--all", "--dry-run", "--model", "builtin/extractive"), (BROKEN,), every_conversation=True
    ),
    "find": Read(("find", "retry")),
    "repair": Read(("repair", NAME)),
    "repair-all": Read(("repair", "--all"), (BROKEN,), every_conversation=True),
    "strip-all": Read(("strip", "--all"), (BROKEN,), every_conversation=True),
    "label": Read(("summary", "set", NAME, "0", "mine")),
    "label-clear": Read(("summary", "clear", PATH, "0")),
}
"""Every read command (and ``label``, which writes), on the folder by name or by path."""

REFUSED = {
    "label-text": (("summary", "set", NAME, "0", f"mine {BAD}"), "TEXT"),
    "label-turn": (("summary", "set", NAME, f"0{BAD}", "mine"), "TURN"),
    "query-message": (("query", NAME, f"go on {BAD}", "--model", MODEL), "MESSAGE"),
    "query-new": (("query", "--new", f"hello {BAD}", "--model", MODEL), "MESSAGE"),
    "model": (("summarize", NAME, "--model", f"ollama/{BAD}"), "--model"),
    "cfg": (("--cfg", f"conversation.title={BAD}", "turns", NAME), "--cfg"),
    "transcript-turn": (("transcript", NAME, "--turn", BAD), "--turn"),
    "fork-until": (("fork", NAME, "--until", BAD), "--until"),
    "no-such-conversation": (("turns", f"nope-{BAD}"), "no conversation 'nope-\\xff'"),
}
"""Arguments that are not UTF-8 where text is needed, and what the one-line error must name."""


def _setups(index: int) -> list[str]:
    """Every setup at full scale; at quick scale one, each in turn."""
    return list(SETUPS) if FULL else [list(SETUPS)[index % len(SETUPS)]]


def _cases() -> list[Any]:
    pairs = [(name, output) for name, read in READS.items() for output in read.formats]
    return [
        pytest.param(name, output, setup, id=f"{name}-{output}-{setup}")
        for index, (name, output) in enumerate(pairs)
        for setup in _setups(index)
    ]


def _refusals() -> list[Any]:
    return [
        pytest.param(name, setup, id=f"{name}-{setup}")
        for index, name in enumerate(REFUSED)
        for setup in _setups(index)
    ]


def build_locale(target: Path) -> str | None:
    """Build en_US.UTF-8 under ``target`` (for ``LOCPATH``) with ``localedef``; ``None``, or why it could not."""
    localedef = shutil.which("localedef")
    if localedef is None:
        return "localedef is not installed"
    done = subprocess.run(
        [localedef, "-i", "en_US", "-f", "UTF-8", str(target / "en_US.UTF-8")],
        capture_output=True,
        check=False,
        timeout=60,
    )
    if not (target / "en_US.UTF-8").is_dir():
        return f"localedef could not build en_US.UTF-8: {done.stderr.decode(errors='replace')[:200]}"
    return None


@dataclass
class Probe:
    """The probe's tally, and the locales ``localedef`` built (or why it could not)."""

    tally: Tally
    locales: Path
    no_locale: str | None

    def run(self, root: Path, setup: str, args: tuple[str, ...], server: ModelServer | None = None) -> Outcome:
        """``turnmark --workspace ROOT ARGS`` as a real process in ``root``, stdout and stderr pipes."""
        chosen = SETUPS[setup]
        if chosen.needs_locale and self.no_locale:
            pytest.skip(self.no_locale)
        environ = isolated_env(root.parent / "home") | chosen.environ
        if chosen.needs_locale:
            environ["LOCPATH"] = str(self.locales)
        config = ("--cfg", f"providers.llm.ollama.base_url={server.url}") if server else ()
        command = [TURNMARK, "--workspace", str(root), *config, *args]
        done = subprocess.run(command, cwd=root, env=environ, capture_output=True, timeout=60, check=False)
        self.tally.runs += 1
        return Outcome(tuple(command[1:]), done.returncode, done.stdout, done.stderr, None)

    def verdict(self, case: str, problems: list[str], outcome: Outcome) -> None:
        self.tally.case(case, problems)
        assert not problems, "\n".join([*problems, outcome.describe()])


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Probe]:
    locales = tmp_path_factory.mktemp("locales")
    tally = Tally(
        "hostile names: folder names (workspace root, conversation, broken conversation) with the bytes \\xff\\xfe, "
        "and arguments that are not UTF-8, under C.UTF-8, C, POSIX, en_US.UTF-8 and strict UTF-8, ASCII and "
        "Latin-1 stdout pipes",
        "no traceback, exit 0/1/2, no raw name byte on stdout or stderr, each stream in its encoding; text shows "
        "\\xff, JSON parses and gives the name back (\\udcff); text that must be UTF-8 is a one-line usage error",
    )
    probe = Probe(tally, locales, build_locale(locales))
    yield probe
    setups = f"each under all {len(SETUPS)} setups" if FULL else f"rotating through {len(SETUPS)} setups"
    skipped = f" (en_US.UTF-8 skipped: {probe.no_locale})" if probe.no_locale else ""
    tally.publish(
        f"{tally.runs} turnmark processes: {len(READS)} commands x text and JSON (show: and md, html) and "
        f"{len(REFUSED)} refusals, "
        f"{setups}, a title no ASCII or Latin-1 stream holds, a question by path, a refused write{skipped}"
    )


@pytest.fixture
def hostile(workspace: Path) -> Path:
    """The fixture workspace, moved under a root named with ``\\xff\\xfe``, with its hostile folders."""
    root = workspace.parent / ROOT
    workspace.rename(root)
    conversations = root / ".jp" / "conversations"
    folder = next(conversations.glob("17800000010-*"))
    metadata = json.loads((folder / "metadata.json").read_text())
    metadata["title"] = TITLE
    (folder / "metadata.json").write_text(json.dumps(metadata, ensure_ascii=False, indent=2) + "\n")
    folder.rename(conversations / NAME)
    shutil.copytree(conversations / NAME, conversations / BROKEN)
    (conversations / BROKEN / "events.json").write_bytes(b'[{"type": "chat_request", ')
    shutil.copytree(conversations / NAME, conversations / os.fsdecode(b"\xff\xfe\xfd"))
    return root


def decoded(outcome: Outcome, encoding: str, problems: list[str]) -> tuple[str, str]:
    """stdout and stderr as text, noting a stream not in ``encoding`` or holding a name's raw bytes."""
    texts = []
    for channel, data in (("stdout", outcome.stdout), ("stderr", outcome.stderr)):
        if RAW in data or b"\xff" in data:
            problems.append(f"{channel} holds the raw bytes of a name")
        try:
            texts.append(data.decode(encoding))
        except UnicodeDecodeError as error:
            problems.append(f"{channel} is not {encoding}: {error}")
            texts.append(data.decode(encoding, "replace"))
    if (trace := outcome.traceback()) is not None:
        problems.append(f"traceback:\n{trace}")
    if outcome.code not in (0, 1, 2):
        problems.append(f"exit status {outcome.code}")
    return texts[0], texts[1]


def json_problems(stdout: str, read: Read) -> list[str]:
    try:
        document = json.loads(stdout)
    except ValueError as error:
        return [f"stdout is not JSON: {error}"]
    found = list(strings(document))
    return [
        f"the JSON does not give back {expected!a}"
        for expected in read.holds
        if not any(expected in text and os.fsencode(expected) in os.fsencode(text) for text in found)
    ]


@pytest.fixture(scope="module")
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


@pytest.mark.parametrize(("name", "output", "setup"), _cases())
def test_every_read_survives_names_that_are_not_utf8(
    name: str, output: str, setup: str, hostile: Path, probe: Probe
) -> None:
    read = READS[name]
    outcome = probe.run(hostile, setup, (*read.args, "--format", output))
    problems: list[str] = []
    stdout, stderr = decoded(outcome, SETUPS[setup].encoding, problems)
    if outcome.code != 0 and not read.every_conversation:
        problems.append(f"exit {outcome.code}: the command did not read the folder")
    if output == "json":
        problems += json_problems(stdout, read)
    elif read.every_conversation and SHOWN not in stdout + stderr:
        problems.append(f"the text does not show the bytes as {SHOWN}")
    probe.verdict(f"{name}/{output}/{setup}", problems, outcome)


@pytest.mark.parametrize(("name", "setup"), _refusals())
def test_text_that_is_not_utf8_is_a_one_line_usage_error(name: str, setup: str, hostile: Path, probe: Probe) -> None:
    args, named = REFUSED[name]
    before = {path: path.read_bytes() for path in (hostile / ".jp").rglob("*.json")}
    outcome = probe.run(hostile, setup, args)
    problems: list[str] = []
    stdout, stderr = decoded(outcome, SETUPS[setup].encoding, problems)
    lines = stderr.splitlines()
    if outcome.code != 2:
        problems.append(f"exit {outcome.code}, not 2")
    if len(lines) != 1 or not lines[0].startswith("error: ") or named not in lines[0] or "\\xff" not in lines[0]:
        problems.append(f"stderr is not one line naming {named} and showing \\xff")
    if stdout:
        problems.append("something was printed on stdout")
    if {path: path.read_bytes() for path in (hostile / ".jp").rglob("*.json")} != before:
        problems.append("a file changed")
    probe.verdict(f"{name}/{setup}", problems, outcome)


SHOWN_TITLE = {
    "ascii": ("Backoff \\u{2014} \\u{fc}n\\u{ef}code \\u{2713}", "Backoff \\u2014 \\u00fcn\\u00efcode \\u2713"),
    "ascii-C": ("Backoff \\u{2014} \\u{fc}n\\u{ef}code \\u{2713}", "Backoff \\u2014 \\u00fcn\\u00efcode \\u2713"),
    "latin-1": ("Backoff \\u{2014} ünïcode \\u{2713}", "Backoff \\u2014 ünïcode \\u2713"),
}
"""The title as a stream that cannot hold all of it shows it: code points escaped, in text and in JSON."""


@pytest.mark.parametrize("output", ["text", "json"])
@pytest.mark.parametrize("setup", list(SHOWN_TITLE))
@pytest.mark.parametrize("command", ["conversations", "show"])
def test_what_the_stream_cannot_encode_is_shown_escaped(
    command: str, setup: str, output: str, hostile: Path, probe: Probe
) -> None:
    outcome = probe.run(hostile, setup, (command, *([NAME] if command == "show" else []), "--format", output))
    problems: list[str] = []
    stdout, _ = decoded(outcome, SETUPS[setup].encoding, problems)
    shown = SHOWN_TITLE[setup][output == "json"]
    if shown not in stdout:
        problems.append(f"stdout does not show the title as {shown}")
    if output == "json" and not problems and TITLE not in strings(json.loads(stdout)):
        problems.append("the JSON does not give back the title")
    probe.verdict(f"title/{command}/{output}/{setup}", problems, outcome)


@pytest.mark.parametrize("setup", ["en_US.UTF-8", "ascii-C"])
def test_a_question_in_a_folder_named_with_bytes_is_answered_and_stored(
    setup: str, hostile: Path, server: ModelServer, probe: Probe
) -> None:
    outcome = probe.run(hostile, setup, ("query", PATH, "go on", "--model", MODEL), server)
    problems: list[str] = []
    stdout, _ = decoded(outcome, SETUPS[setup].encoding, problems)
    if outcome.code != 0 or "A plain answer." not in stdout:
        problems.append("the question was not answered")
    events = json.loads((hostile / PATH / "events.json").read_text())
    if not any(entry.get("content") == "go on" for entry in events):
        problems.append("the question was not stored in the folder")
    probe.verdict(f"query-by-path/{setup}", problems, outcome)


@pytest.mark.parametrize("output", ["text", "json"])
@pytest.mark.parametrize("setup", ["en_US.UTF-8", "ascii-C"])
def test_a_refused_write_names_the_folder_by_the_rule(setup: str, output: str, hostile: Path, probe: Probe) -> None:
    """A ``FileFault``: ``events.json`` is a link, so ``summarize`` writes nothing and names the file."""
    events = hostile / PATH / "events.json"
    outside = hostile.parent / "outside.json"
    events.rename(outside)
    events.symlink_to(outside)
    args = ("--format", output, "summarize", NAME, "--model", "builtin/extractive")
    outcome = probe.run(hostile, setup, args)
    problems: list[str] = []
    stdout, stderr = decoded(outcome, SETUPS[setup].encoding, problems)
    if f"{SHOWN}/events.json: not written" not in stderr:
        problems.append(f"stderr does not name {SHOWN}/events.json")
    if (
        output == "json"
        and not problems
        and not any(f"{NAME}/events.json" in text for text in strings(json.loads(stdout)))
    ):
        problems.append("the JSON error does not give back the folder name")
    probe.verdict(f"file-fault/{output}/{setup}", problems, outcome)

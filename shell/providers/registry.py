"""Opening the provider for a resolved model: base URL and key from config and environment, as JP does."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from turnmark.core.stream.config import lookup
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.summaries.request import SummaryRequest
from turnmark.core.wire.models import ModelSpec
from turnmark.shell.errors import ModelError
from turnmark.shell.providers.protocol import ChatPart
from turnmark.shell.secrets import keep_secret
from turnmark.shell.settings import HttpSettings


class SummaryProvider(Protocol):
    model: ModelSpec

    @property
    def endpoint(self) -> str:
        """The server's base URL (a run stops asking one that did not answer)."""
        ...

    def context_window(self) -> int | None: ...

    def complete(self, request: SummaryRequest, should_stop: Callable[[], bool] = ...) -> str: ...

    def chat(self, body: dict[str, Any], should_stop: Callable[[], bool] = ...) -> Iterator[ChatPart]: ...


def _key(env: Mapping[str, str], name: str, model: ModelSpec) -> str:
    """An API key from the environment: present, printable ASCII (surrounding white space ignored)."""
    value = (env.get(name) or "").strip()
    if not value:
        raise ModelError(f"{name} is not set (needed for {model.id})")
    if not (value.isascii() and value.isprintable()):
        raise ModelError(f"{name} holds characters an API key cannot have (needed for {model.id})")
    keep_secret(value)
    return value


def _setting(config: JsonObject, provider: str, key: str) -> str | None:
    value = lookup(config, f"providers.llm.{provider}.{key}")
    return value if isinstance(value, str) and value.strip() else None


def open_provider(
    model: ModelSpec, config: JsonObject, environ: Mapping[str, str] | None = None, settings: HttpSettings | None = None
) -> SummaryProvider:
    """The provider for ``model``; a missing API key is a ``ModelError`` naming the variable.

    Provider modules (and httpx) are imported here, so commands that call no model start fast.
    """
    from turnmark.shell.providers.anthropic import API_KEY_ENV, AnthropicProvider
    from turnmark.shell.providers.anthropic import DEFAULT_BASE_URL as ANTHROPIC_URL
    from turnmark.shell.providers.ollama import DEFAULT_BASE_URL as OLLAMA_URL
    from turnmark.shell.providers.ollama import OllamaProvider
    from turnmark.shell.providers.openai import DEFAULTS as OPENAI_DEFAULTS
    from turnmark.shell.providers.openai import OpenAICompatibleProvider

    env = os.environ if environ is None else environ
    http = settings or HttpSettings()
    provider = model.provider
    if provider == "ollama":
        return OllamaProvider(model, _setting(config, provider, "base_url") or OLLAMA_URL, http)
    if provider == "anthropic":
        key = _key(env, _setting(config, provider, "api_key_env") or API_KEY_ENV, model)
        return AnthropicProvider(model, _setting(config, provider, "base_url") or ANTHROPIC_URL, key, http)
    if provider in OPENAI_DEFAULTS:
        default_url, _, default_key = OPENAI_DEFAULTS[provider]
        token_name = _setting(config, provider, "api_key_env") or default_key
        token = _key(env, token_name, model) if token_name else None
        url = _setting(config, provider, "base_url") or default_url
        if provider == "openai":
            variable = _setting(config, provider, "base_url_env") or "OPENAI_BASE_URL"
            url = (env.get(variable) or "").strip() or url
        return OpenAICompatibleProvider(model, url, token, http)
    raise ModelError(f"no provider for {model.id}")

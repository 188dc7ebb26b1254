"""Opening the provider for a resolved model: base URL and key from config and environment, as JP does."""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit

from turnmark.core.stream.config import lookup
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.wire.models import ModelSpec
from turnmark.shell.errors import ModelError
from turnmark.shell.providers.anthropic import AnthropicProvider
from turnmark.shell.providers.base import Provider
from turnmark.shell.providers.llamacpp import LlamaCppProvider
from turnmark.shell.providers.ollama import OllamaProvider
from turnmark.shell.providers.openai import OpenAICompatibleProvider
from turnmark.shell.secrets import keep_secret
from turnmark.shell.settings import HttpSettings

DEFAULTS: dict[str, tuple[type[Provider], str]] = {
    "ollama": (OllamaProvider, "http://localhost:11434"),
    "anthropic": (AnthropicProvider, "https://api.anthropic.com"),
    "openai": (OpenAICompatibleProvider, "https://api.openai.com"),
    "llamacpp": (LlamaCppProvider, "http://127.0.0.1:8080"),
    "openrouter": (OpenAICompatibleProvider, "https://openrouter.ai"),
}
"""Each provider's class and default base URL."""

KEY_VARIABLES: dict[str, str | None] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "llamacpp": None,
    "openrouter": "OPENROUTER_API_KEY",
}
"""Where a provider's API key is read by default (``api_key_env`` renames it); Ollama takes none."""


def _key(env: Mapping[str, str], name: str, model: ModelSpec) -> str:
    """An API key from the environment: present, printable ASCII (surrounding white space ignored)."""
    value = (env.get(name) or "").strip()
    if not value:
        raise ModelError(f"{name} is not set (needed for {model.id})")
    if not (value.isascii() and value.isprintable()):
        raise ModelError(f"{name} holds characters an API key cannot have (needed for {model.id})")
    keep_secret(value)
    return value


def _base_url(value: str, source: str, model: ModelSpec) -> str:
    """A base URL the HTTP client can use: ``http://`` or ``https://`` and a host."""
    try:
        parts = urlsplit(value)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        usable = False
    if not usable:
        raise ModelError(f"{source} {value!r} is not an http:// or https:// URL (needed for {model.id})")
    return value


def _setting(config: JsonObject, provider: str, key: str) -> str | None:
    value = lookup(config, f"providers.llm.{provider}.{key}")
    return value if isinstance(value, str) and value.strip() else None


def open_provider(
    model: ModelSpec, config: JsonObject, environ: Mapping[str, str] | None = None, settings: HttpSettings | None = None
) -> Provider:
    """The provider for ``model``; a missing API key is a ``ModelError`` naming the variable.

    httpx is imported when the provider is made, so commands that call no model start fast.
    """
    provider = model.provider
    if provider not in DEFAULTS:
        raise ModelError(f"no provider for {model.id}")
    env = os.environ if environ is None else environ
    kind, default_url = DEFAULTS[provider]
    token: str | None = None
    if provider in KEY_VARIABLES:
        variable = _setting(config, provider, "api_key_env") or KEY_VARIABLES[provider]
        token = _key(env, variable, model) if variable else None
    source = f"providers.llm.{provider}.base_url"
    url = _setting(config, provider, "base_url") or default_url
    if provider == "openai":
        url_variable = _setting(config, provider, "base_url_env") or "OPENAI_BASE_URL"
        from_env = (env.get(url_variable) or "").strip()
        if from_env:
            source, url = url_variable, from_env
    address = f"{source}, default {default_url}"
    return kind(model, _base_url(url, source, model), settings or HttpSettings(), token, address)

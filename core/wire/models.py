"""Which model writes turn summaries (RFD 126's resolution chain) and how it is named.

Chain: ``conversation.turn_summary.generate.model``, else
``conversation.title.generate.model``, else ``assistant.model.id`` with fresh
parameters; unset reasoning becomes ``{effort: low, exclude: true}``. IDs are
``provider/name`` (split at the first ``/``) or ``{provider, name}``; anything
else is an alias, followed through ``providers.llm.aliases``. With no model
configured at all, the offline ``builtin/extractive`` summarizer is used.
"""

from dataclasses import dataclass

from returns.result import Failure, Result, Success

from turnmark.core.errors import ConfigError
from turnmark.core.stream.config import lookup
from turnmark.core.stream.json_value import Json, JsonObject
from turnmark.core.summaries.sources import EXTRACTIVE

BUILTIN = "builtin"
PROVIDERS = ("ollama", "openai", "llamacpp", "openrouter", "anthropic", BUILTIN)
LOW_REASONING: JsonObject = {"effort": "low", "exclude": True}


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A resolved model: provider, name, and the parameters to send."""

    provider: str
    name: str
    parameters: JsonObject
    fallback_reason: str | None = None
    """Set when the offline summarizer stands in for an assistant model turnmark cannot use."""
    source: str = "default"
    """Where the choice came from: a config key, ``--model``, or ``default`` (nothing configured)."""

    @property
    def implicit(self) -> bool:
        """Chosen only because it is the assistant's model (so the offline summarizer may stand in)."""
        return self.source == "assistant.model.id"

    def offline(self, reason: str) -> "ModelSpec":
        """The offline summarizer standing in for this model, saying why."""
        return ModelSpec(BUILTIN, "extractive", {}, f"{self.id}: {reason}", self.source)

    @property
    def id(self) -> str:
        return f"{self.provider}/{self.name}"

    @property
    def is_builtin(self) -> bool:
        return self.provider == BUILTIN


def _split(value: Json) -> tuple[str, str] | None:
    if isinstance(value, dict):
        provider, name = value.get("provider"), value.get("name")
        if isinstance(provider, str) and isinstance(name, str) and provider.strip() and name.strip():
            return provider.strip().lower(), name.strip()
        return None
    if isinstance(value, str) and "/" in value:
        provider, name = value.split("/", 1)
        if provider.strip() and name.strip():
            return provider.strip().lower(), name.strip()
    return None


def resolve_id(value: Json, aliases: Json) -> Result[tuple[str, str], ConfigError]:
    """A model ID or alias as ``(provider, name)``, following alias chains (a cycle is an error)."""
    table = aliases if isinstance(aliases, dict) else {}
    seen: list[str] = []
    while True:
        split = _split(value)
        if split is not None:
            return Success(split)
        if not isinstance(value, str) or not value.strip():
            return Failure(ConfigError("config", f"not a model ID: {value!r}"))
        if value in seen:
            return Failure(ConfigError("providers.llm.aliases", f"alias cycle: {' -> '.join([*seen, value])}"))
        if value not in table:
            return Failure(ConfigError("config", f"{value!r} is neither provider/name nor a known alias"))
        seen.append(value)
        value = table[value]


def _configured(config: JsonObject) -> tuple[Json, JsonObject, str] | None:
    for key in ("conversation.turn_summary.generate.model", "conversation.title.generate.model"):
        model = lookup(config, key)
        if isinstance(model, dict) and model.get("id") is not None:
            parameters = model.get("parameters")
            return model["id"], dict(parameters) if isinstance(parameters, dict) else {}, key
    assistant = lookup(config, "assistant.model.id")
    if assistant is not None:
        return assistant, {}, "assistant.model.id"
    return None


def resolve_summary_model(config: JsonObject, override: str | None = None) -> Result[ModelSpec, ConfigError]:
    """The turn-summary model for this config (``override`` replaces the ID, as ``--model`` does).

    ``config`` is the merged configuration, as nested objects (JP's keys).

    >>> from turnmark.core import resolve_summary_model
    >>> resolve_summary_model({}).unwrap().id
    'builtin/extractive'
    >>> config = {
    ...     "conversation": {"turn_summary": {"generate": {"model": {"id": "haiku"}}}},
    ...     "providers": {"llm": {"aliases": {"haiku": "anthropic/claude-haiku-4-5"}}},
    ... }
    >>> model = resolve_summary_model(config).unwrap()
    >>> model.id, model.source
    ('anthropic/claude-haiku-4-5', 'conversation.turn_summary.generate.model')
    >>> model.parameters
    {'reasoning': {'effort': 'low', 'exclude': True}}
    >>> resolve_summary_model(config, "ollama/qwen3:4b").unwrap().id
    'ollama/qwen3:4b'
    >>> title_model = {"conversation": {"title": {"generate": {"model": {"id": "x/y"}}}}}
    >>> print(resolve_summary_model(title_model).failure().message)
    turnmark cannot talk to 'x' models (it speaks ollama, openai, llamacpp, openrouter, anthropic, builtin)
    """
    configured = _configured(config)
    if configured is None and override is None:
        return Success(ModelSpec(BUILTIN, "extractive", {}))
    model_id, parameters, source = configured or (override, {}, "--model")
    if override is not None:
        model_id, parameters, source = override, {}, "--model"
    resolved = resolve_id(model_id, lookup(config, "providers.llm.aliases"))
    problem = resolved.failure().message if isinstance(resolved, Failure) else None
    provider, name = resolved.value_or(("", ""))
    if problem is None and provider not in PROVIDERS:
        problem = f"turnmark cannot talk to {provider!r} models (it speaks {', '.join(PROVIDERS)})"
    if problem is not None:
        if source == "assistant.model.id":
            return Success(ModelSpec(BUILTIN, "extractive", {}, f"{source}: {problem}", source))
        return Failure(ConfigError(source, problem))
    if provider == BUILTIN and name != "extractive":
        return Failure(ConfigError(source, f"the only builtin model is {EXTRACTIVE}"))
    if parameters.get("reasoning") is None:
        parameters = {**parameters, "reasoning": dict(LOW_REASONING)}
    return Success(ModelSpec(provider, name, parameters, None, source))

"""A model's context window, as JP finds it: OpenAI's from a table, the others' from what the server answers.

Each reader takes the decoded JSON answer and gives a positive size, or ``None``.
"""

from turnmark.core.stream.json_value import Json

OPENAI_CONTEXT_WINDOWS = {
    "gpt-5": 400_000,
    "gpt-5-mini": 400_000,
    "gpt-5-nano": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1-nano": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "o4-mini": 200_000,
    "o3": 200_000,
}
"""OpenAI does not report context windows; like JP, turnmark keeps a table (unknown models: none)."""


def _size(value: Json) -> int | None:
    return value if isinstance(value, int) and value > 0 else None


def openai_context_window(name: str) -> int | None:
    """From the table."""
    return OPENAI_CONTEXT_WINDOWS.get(name)


def anthropic_context_window(details: Json) -> int | None:
    """From ``GET /v1/models/{id}``: ``max_input_tokens``."""
    return _size(details.get("max_input_tokens") if isinstance(details, dict) else None)


def llamacpp_context_window(props: Json) -> int | None:
    """From llama.cpp's ``GET /props``: ``default_generation_settings.n_ctx``."""
    settings = props.get("default_generation_settings", {}) if isinstance(props, dict) else {}
    return _size(settings.get("n_ctx") if isinstance(settings, dict) else None)


def listed_context_window(listing: Json, name: str) -> int | None:
    """From an OpenAI-style ``GET /models`` (OpenRouter): the model's ``top_provider`` or own ``context_length``."""
    for entry in listing.get("data", []) if isinstance(listing, dict) else []:
        if isinstance(entry, dict) and entry.get("id") == name:
            top = entry.get("top_provider") or {}
            return _size((top.get("context_length") if isinstance(top, dict) else None) or entry.get("context_length"))
    return None


def ollama_context_window(listing: Json, name: str) -> int | None:
    """From Ollama's ``GET /api/tags``: the first entry named ``name``, its ``details.context_length``."""
    for entry in listing.get("models", []) if isinstance(listing, dict) else []:
        if isinstance(entry, dict) and name in (entry.get("name"), entry.get("model")):
            details = entry.get("details") or {}
            return _size(details.get("context_length") if isinstance(details, dict) else None)
    return None

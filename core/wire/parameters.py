"""What a summary request sends besides its prompt, in each wire API's own terms (RFD 126 parameters).

The summary model's resolved ``reasoning`` (default: low effort, excluded) is
sent where the model takes it, so a thinking model does not spend the answer
budget thinking: Anthropic ``thinking`` (disabled, or enabled with an explicit
``budget_tokens``) for models that think; OpenAI ``reasoning_effort`` for its
reasoning models; OpenRouter's ``reasoning`` object; Ollama ``think``;
llama.cpp's ``chat_template_kwargs.enable_thinking``. A configured
``max_tokens`` replaces the answer budget turnmark computes; ``temperature``
and ``top_p`` go to every API.
"""

from turnmark.core.stream.json_value import JsonObject

_OPENAI_REASONING = ("o1", "o3", "o4", "gpt-5")
_ANTHROPIC_THINKING = ("claude-3-7", "claude-sonnet-4", "claude-opus-4", "claude-haiku-4", "claude-4")


def _reasoning(parameters: JsonObject) -> JsonObject:
    value = parameters.get("reasoning")
    return value if isinstance(value, dict) else {}


def _thinks_off(reasoning: JsonObject) -> bool:
    return reasoning.get("exclude") is True or reasoning.get("effort") in ("none", "minimal", "low")


def answer_limit(parameters: JsonObject, computed: int) -> int:
    """The answer's token limit: the configured ``max_tokens``, else what the batch needs."""
    value = parameters.get("max_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else computed


def reasoning_fields(provider: str, name: str, parameters: JsonObject) -> JsonObject:
    """The body fields that set reasoning for ``provider/name`` (none where the model takes none)."""
    reasoning = _reasoning(parameters)
    if not reasoning:
        return {}
    effort = reasoning.get("effort")
    off = _thinks_off(reasoning)
    if provider == "anthropic":
        if not name.startswith(_ANTHROPIC_THINKING):
            return {}
        budget = reasoning.get("budget_tokens")
        if isinstance(budget, int) and not isinstance(budget, bool) and budget >= 1024 and not off:
            return {"thinking": {"type": "enabled", "budget_tokens": budget}}
        return {"thinking": {"type": "disabled"}}
    if provider == "openai":
        if not name.startswith(_OPENAI_REASONING) or not isinstance(effort, str):
            return {}
        return {"reasoning_effort": "minimal" if effort == "none" and name.startswith("gpt-5") else effort}
    if provider == "openrouter":
        return {"reasoning": {key: reasoning[key] for key in ("effort", "exclude", "max_tokens") if key in reasoning}}
    if provider == "ollama":
        if name.startswith("gpt-oss"):
            return {"think": effort if effort in ("low", "medium", "high") else "low"}
        return {"think": not off}
    if provider == "llamacpp":
        return {"chat_template_kwargs": {"enable_thinking": not off}}
    return {}


def sampling(parameters: JsonObject) -> JsonObject:
    """The sampling parameters every API understands (``temperature``, ``top_p``), from JP's ``parameters``."""
    return {
        key: parameters[key]
        for key in ("temperature", "top_p")
        if isinstance(parameters.get(key), int | float) and not isinstance(parameters.get(key), bool)
    }

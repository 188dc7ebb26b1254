"""Summary request bodies: the instructions, the transcripts and the answer's schema in each API's shape.

Beside the chat bodies of ``core.wire.chat``: Anthropic ``/v1/messages`` (schema
in ``output_config``, an enabled thinking budget on top of the answer's room),
OpenAI-compatible ``/chat/completions`` (``response_format``; OpenAI itself
counts ``max_completion_tokens``) and Ollama ``/api/chat`` (schema in
``format``, the packed window and the answer's room in ``options``).
"""

from turnmark.core.stream.json_value import JsonObject
from turnmark.core.summaries.request import SummaryRequest
from turnmark.core.wire.chat import WIRE_APIS
from turnmark.core.wire.models import ModelSpec
from turnmark.core.wire.parameters import answer_limit, reasoning_fields, sampling

ANTHROPIC_MIN_TOKENS = 256
"""The least answer room asked of Anthropic."""


def response_format(provider: str, schema: JsonObject) -> JsonObject:
    """The structured-output request: OpenAI's ``json_schema``; for llama.cpp ``json_object`` with a ``schema``,
    the one shape both llama.cpp's own server and llama-cpp-python's accept."""
    if provider == "llamacpp":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_schema", "json_schema": {"name": "structured_output", "schema": schema, "strict": True}}


def _system_and_user(request: SummaryRequest) -> list[JsonObject]:
    return [{"role": "system", "content": request.system}, {"role": "user", "content": request.user}]


def anthropic_summary_body(model: ModelSpec, request: SummaryRequest) -> JsonObject:
    """``/v1/messages``; sampling is left out when thinking is enabled (Anthropic refuses both)."""
    thinking = reasoning_fields("anthropic", model.name, model.parameters)
    budget = thinking.get("thinking", {}).get("budget_tokens", 0) if thinking else 0
    body: JsonObject = {
        "model": model.name,
        "max_tokens": max(answer_limit(model.parameters, request.answer_tokens), ANTHROPIC_MIN_TOKENS) + budget,
        "system": request.system,
        "messages": [{"role": "user", "content": request.user}],
        "output_config": {"format": {"type": "json_schema", "schema": request.schema}},
        "stream": True,
    }
    if not budget:
        body.update(sampling(model.parameters))
    body.update(thinking)
    return body


def openai_summary_body(model: ModelSpec, request: SummaryRequest) -> JsonObject:
    """``/chat/completions`` for OpenAI, llama.cpp and OpenRouter."""
    body: JsonObject = {
        "model": model.name,
        "messages": _system_and_user(request),
        "response_format": response_format(model.provider, request.schema),
        "stream": True,
    }
    limit = "max_completion_tokens" if model.provider == "openai" else "max_tokens"
    body[limit] = answer_limit(model.parameters, request.answer_tokens)
    body.update(sampling(model.parameters))
    body.update(reasoning_fields(model.provider, model.name, model.parameters))
    return body


def ollama_summary_body(model: ModelSpec, request: SummaryRequest) -> JsonObject:
    """``/api/chat``; Ollama is told the window the batch was packed for, or it cuts the prompt to its default."""
    options = {"num_ctx": request.context_window, "num_predict": answer_limit(model.parameters, request.answer_tokens)}
    options.update(sampling(model.parameters))
    return {
        "model": model.name,
        "messages": _system_and_user(request),
        "format": request.schema,
        "options": options,
        "stream": True,
        **reasoning_fields("ollama", model.name, model.parameters),
    }


def summary_body(model: ModelSpec, request: SummaryRequest) -> JsonObject:
    """The body of ``request`` in the API ``model``'s provider speaks."""
    api = WIRE_APIS[model.provider]
    if api == "anthropic":
        return anthropic_summary_body(model, request)
    if api == "ollama":
        return ollama_summary_body(model, request)
    return openai_summary_body(model, request)

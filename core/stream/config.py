"""JP configuration as data: layers, merging, and the keys turnmark reads.

A layer is a partial config object. Merging is JP's per-field "later wins":
objects merge key by key, anything else (arrays included) is replaced. The
order, low to high (JP's): built-in defaults, config files (each after the
files its ``extends`` names), ``JP_CFG_*`` variables, the conversation's base
config and its deltas, then ``--cfg``. The shell reads the files and the
environment; everything else is decided here.
"""

from __future__ import annotations

import fnmatch
import json
import tomllib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from returns.result import Failure, Result, Success

from turnmark.core.errors import ConfigError
from turnmark.core.stream.json_value import Json, JsonObject
from turnmark.core.stream.payloads import ConfigDelta

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream


def merge(base: JsonObject, layer: JsonObject) -> JsonObject:
    """``layer`` over ``base``: objects merge recursively, other values replace."""
    merged = dict(base)
    for key, value in layer.items():
        current = merged.get(key)
        merged[key] = merge(current, value) if isinstance(current, dict) and isinstance(value, dict) else value
    return merged


def merge_all(layers: Iterable[JsonObject]) -> JsonObject:
    merged: JsonObject = {}
    for layer in layers:
        merged = merge(merged, layer)
    return merged


def conversation_layers(stream: ConversationStream) -> list[JsonObject]:
    """The conversation's own config: its base config, then every ``config_delta`` in stream order."""
    base = stream.upgraded().base_config or {}
    deltas = [
        entry.payload.delta
        for entry in stream.entries
        if isinstance(entry.payload, ConfigDelta) and isinstance(entry.payload.delta, dict)
    ]
    return [base, *deltas]


def lookup(config: JsonObject, path: str) -> Json:
    """The value at a dotted ``path`` (``assistant.model.id``), or ``None``."""
    value: Json = config
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


# Layers from text: TOML files, JP_CFG_* variables, --cfg assignments --------------------------------

TURN_SUMMARY = "conversation.turn_summary.generate"
MAX_MESSAGE_CHARS = "conversation.turn_summary.transcript.max_message_chars"
"""How long a request or answer may be in a transcript before its middle is cut (turnmark's, not JP's)."""
DEFAULT_MAX_MESSAGE_CHARS = 4000
"""RFD 126's ``MAX_MESSAGE_CHARS``."""
MIN_MAX_MESSAGE_CHARS = 200
"""Below this a transcript keeps too little of a request to label it by."""
DEFAULTS: JsonObject = {
    "conversation": {
        "turn_summary": {
            "generate": {"auto": True, "batch_size": 5},
            "transcript": {"max_message_chars": DEFAULT_MAX_MESSAGE_CHARS},
        }
    }
}

_BOOLEAN_KEYS = {f"{TURN_SUMMARY}.auto", "conversation.title.generate.auto"}
_INTEGER_KEYS = {f"{TURN_SUMMARY}.batch_size", MAX_MESSAGE_CHARS, "assistant.model.parameters.max_tokens"}
_MODEL_KEYS = {f"{TURN_SUMMARY}.model", "conversation.title.generate.model", "assistant.model"}
KNOWN_KEYS = (
    f"{TURN_SUMMARY}.auto",
    f"{TURN_SUMMARY}.batch_size",
    f"{TURN_SUMMARY}.model.id",
    f"{TURN_SUMMARY}.model",
    MAX_MESSAGE_CHARS,
    "conversation.title.generate.auto",
    "conversation.title.generate.model.id",
    "conversation.title.generate.model",
    "assistant.model.id",
    "assistant.model.parameters.max_tokens",
    "assistant.model.parameters.reasoning",
    "assistant.system_prompt",
    *(
        f"providers.llm.{provider}.{key}"
        for provider in ("ollama", "openai", "anthropic", "llamacpp", "openrouter")
        for key in ("base_url", "api_key_env")
    ),
)
"""The keys ``JP_CFG_*`` variables can set (JP matches a variable's name against its config schema)."""


def max_message_chars(config: JsonObject) -> Result[int, str]:
    """``conversation.turn_summary.transcript.max_message_chars``: a whole number of at least 200 (default 4,000).

    >>> max_message_chars({}).unwrap(), max_message_chars(merge(DEFAULTS, {})).unwrap()
    (4000, 4000)
    >>> max_message_chars({"conversation": {"turn_summary": {"transcript": {"max_message_chars": 600}}}}).unwrap()
    600
    >>> max_message_chars({"conversation": {"turn_summary": {"transcript": {"max_message_chars": 50}}}}).failure()
    'conversation.turn_summary.transcript.max_message_chars takes a whole number of at least 200, not 50'
    """
    value = lookup(config, MAX_MESSAGE_CHARS)
    if value is None:
        return Success(DEFAULT_MAX_MESSAGE_CHARS)
    if isinstance(value, int) and not isinstance(value, bool) and value >= MIN_MAX_MESSAGE_CHARS:
        return Success(value)
    shown = json.dumps(value, ensure_ascii=False)
    shown = shown if len(shown) <= 40 else shown[:39] + "…"
    return Failure(f"{MAX_MESSAGE_CHARS} takes a whole number of at least {MIN_MAX_MESSAGE_CHARS}, not {shown}")


def parse_toml(data: bytes, source: str) -> Result[JsonObject, ConfigError]:
    """A config file's layer."""
    try:
        return Success(tomllib.loads(data.decode("utf-8")))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        return Failure(ConfigError(source, f"invalid TOML: {error}"))


def extends_patterns(layer: JsonObject) -> list[str]:
    """The ``extends`` globs of a config file (default ``config.d/**/*``), merged before the file itself."""
    value = layer.get("extends", ["config.d/**/*"])
    if isinstance(value, str):
        return [value]
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def is_glob(pattern: str) -> bool:
    """Whether an ``extends`` entry is a glob (``*``, ``?`` or ``[``) rather than the path of one file."""
    return any(character in pattern for character in "*?[")


def glob_segments(pattern: str) -> Result[tuple[str, ...], str]:
    """An ``extends`` glob folder by folder, or why it is not walked: it may only look inside its file's folder.

    A trailing ``**`` means every file below (``**/*``).
    """
    if pattern.startswith("/"):
        return Failure("it is absolute")
    segments = tuple(part for part in pattern.split("/") if part not in ("", "."))
    if ".." in segments:
        return Failure("it climbs out with '..'")
    return Success((*segments, "*") if segments[-1:] == ("**",) else segments)


def name_matches(segment: str, name: str) -> bool:
    """Whether a file or folder name matches one segment of a glob; a wildcard skips dot-names, as ``glob`` does."""
    if name.startswith(".") and not segment.startswith("."):
        return False
    return fnmatch.fnmatchcase(name, segment)


def _nested(path: str, value: Json) -> JsonObject:
    layer: Json = value
    for part in reversed(path.split(".")):
        layer = {part: layer}
    assert isinstance(layer, dict)
    return layer


def _typed(path: str, text: str) -> Result[Json, str]:
    if path in _BOOLEAN_KEYS:
        if text.lower() in ("true", "false"):
            return Success(text.lower() == "true")
        return Failure(f"{path} takes true or false, not {text!r}")
    if path in _INTEGER_KEYS:
        if text.strip().isdecimal() and text.strip().isascii():
            return Success(int(text))
        return Failure(f"{path} takes a whole number, not {text!r}")
    if path in _MODEL_KEYS:
        return Success({"id": text})
    return Success(text)


def assignment(text: str, source: str = "--cfg") -> Result[JsonObject, ConfigError]:
    """One ``--cfg`` value in JP's syntax: ``key=value``, ``key:=json``, or a JSON object (``{...}``).

    (``key+=value`` appends/merges in JP; here it is accepted as ``=``. A path to a config file is
    read by the shell.)
    """
    text = text.strip()
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError as error:
            return Failure(ConfigError(source, f"invalid JSON: {error}"))
        return Success(value) if isinstance(value, dict) else Failure(ConfigError(source, "JSON must be an object"))
    key, separator, raw = text.partition("=")
    if not separator or not key.strip():
        return Failure(ConfigError(source, f"expected KEY=VALUE, got {text!r}"))
    key = key.strip()
    is_json = key.endswith((":", ":+"))
    key = key.rstrip(":+").strip()
    if is_json:
        try:
            return Success(_nested(key, json.loads(raw)))
        except ValueError as error:
            return Failure(ConfigError(source, f"invalid JSON for {key}: {error}"))
    typed = _typed(key, raw.strip())
    return typed.map(lambda value: _nested(key, value)).alt(lambda message: ConfigError(source, message))


def environment_layer(environ: Mapping[str, str]) -> Result[JsonObject, ConfigError]:
    """``JP_CFG_<PATH>`` variables (path segments joined by ``_``, matched against the known keys)."""
    layer: JsonObject = {}
    by_name = {key.replace(".", "_").upper(): key for key in KNOWN_KEYS}
    for name in sorted(environ):
        if not name.startswith("JP_CFG_"):
            continue
        key = by_name.get(name[len("JP_CFG_") :].upper())
        if key is None:
            continue
        raw = environ[name]
        if raw.startswith(":"):
            parsed = assignment(f"{key}:={raw[1:]}", name)
        else:
            if raw.startswith("+"):
                raw = raw[1:]  # merge: for the single values turnmark reads, the same as setting
            elif raw.startswith(("\\:", "\\+")):
                raw = raw[1:]
            parsed = assignment(f"{key}={raw}", name)
        match parsed:
            case Failure(error):
                return Failure(error)
            case Success(value):
                layer = merge(layer, value)
    return Success(layer)

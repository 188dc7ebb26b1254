"""JP configuration as data: merging layers and reading the keys turnmark uses.

A layer is a partial config object. Merging is JP's per-field "later wins":
objects merge key by key, anything else (arrays included) is replaced.
"""

from collections.abc import Iterable

from .json_value import Json, JsonObject
from .payloads import ConfigDelta
from .stream import ConversationStream


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

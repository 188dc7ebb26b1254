"""The JSON values held inside payloads.

Decoded JSON objects are plain ``dict``/``list`` trees in insertion order
(JP's files are written with key order preserved, and ``pmap`` would lose it).
The core never mutates them: every change builds a new tree.
"""

import re
from typing import Any, TypeAlias

Json: TypeAlias = Any
JsonObject: TypeAlias = dict[str, Any]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(value: Json) -> Json:
    """``value`` with every lone surrogate (JSON's ``"\\ud800"``, which no UTF-8 file can hold) made U+FFFD.

    What a model server sends is decoded leniently; what turnmark stores must encode.

    >>> storable({"text": "a\\ud800b", "list": ["\\udcff", 1]})
    {'text': 'a�b', 'list': ['�', 1]}
    """
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {storable(key): storable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [storable(item) for item in value]
    return value

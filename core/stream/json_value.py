"""The JSON values held inside payloads.

Decoded JSON objects are plain ``dict``/``list`` trees in insertion order
(JP's files are written with key order preserved, and ``pmap`` would lose it).
The core never mutates them: every change builds a new tree.
"""

from typing import Any, TypeAlias

Json: TypeAlias = Any
JsonObject: TypeAlias = dict[str, Any]

"""What a save changes, beyond what it was asked to write, when it moves a conversation out of JP's older format.

A legacy conversation (no ``base_config.json``; ``events.json`` starts with the base ``config_delta``) is
written in the current format by any save: its base config is split out into ``base_config.json``, the head
entry leaves ``events.json``, every entry read without an ``event_id`` has the one it was given at load
written, and the ``turn_start`` catch-up (or ``summary set``) inserted before the first turn is written with them.
The commands that save say so, and keep an undo step that gives back the legacy files.

>>> from turnmark.core import ConversationStream, sequential_ids
>>> events = b'''[
...   {"type": "config_delta", "timestamp": "2026-01-02 10:00:00.0", "delta": {"assistant": {}}},
...   {"type": "chat_request", "timestamp": "2026-01-02 10:00:01.0", "content": "Hi"}
... ]'''
>>> loaded = ConversationStream.from_json(events, new_id=sequential_ids()).unwrap()
>>> upgrade = legacy_upgrade(loaded, loaded)
>>> upgrade.to_json()
{'ids_stamped': 1, 'config_split_out': True, 'turn_start_inserted': False}
>>> upgrade.describe()
'base_config.json split out, 1 event ID stamped'
>>> legacy_upgrade(loaded.upgraded(), loaded.upgraded()) is None
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from turnmark.core.stream.json_value import Json
from turnmark.core.stream.payloads import TurnStart, is_conversation_event
from turnmark.core.text.wording import counted

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream


@dataclass(frozen=True, slots=True)
class LegacyUpgrade:
    """The upgrade a save performs: IDs written that the file lacked, whether ``base_config.json`` is new (an
    upgrade a kill interrupted already wrote it), whether a ``turn_start`` now opens the first turn."""

    ids_stamped: int
    config_split_out: bool
    turn_start_inserted: bool

    def to_json(self) -> dict[str, Json]:
        return {
            "ids_stamped": self.ids_stamped,
            "config_split_out": self.config_split_out,
            "turn_start_inserted": self.turn_start_inserted,
        }

    @classmethod
    def from_json(cls, value: dict[str, Json]) -> LegacyUpgrade:
        """The upgrade ``to_json`` wrote (a stored dry run's)."""
        return cls(int(str(value["ids_stamped"])), bool(value["config_split_out"]), bool(value["turn_start_inserted"]))

    def describe(self) -> str:
        """``base_config.json split out, 961 event IDs stamped, a turn_start inserted before the first turn``."""
        parts = ["base_config.json split out"] if self.config_split_out else ["the legacy head entry removed"]
        if self.ids_stamped:
            parts.append(f"{counted(self.ids_stamped, 'event ID')} stamped")
        if self.turn_start_inserted:
            parts.append("a turn_start inserted before the first turn")
        return ", ".join(parts)


def _opens_with_turn_start(stream: ConversationStream) -> bool:
    first = next((entry for entry in stream.entries if is_conversation_event(entry.payload)), None)
    return first is not None and isinstance(first.payload, TurnStart)


def legacy_upgrade(loaded: ConversationStream, saved: ConversationStream) -> LegacyUpgrade | None:
    """What saving ``saved`` (made from ``loaded``) upgrades, or ``None`` when ``loaded`` is not in the legacy
    format (a save writes the current format: ``ConversationStream.upgraded``)."""
    if not loaded.is_legacy:
        return None
    stamped = sum(1 for entry in saved.entries if entry.id_origin in ("assigned", "repaired"))
    inserted = not _opens_with_turn_start(loaded) and _opens_with_turn_start(saved)
    return LegacyUpgrade(stamped, loaded.base_config is None, inserted)

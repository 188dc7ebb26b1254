"""What a save upgrades when it moves a conversation out of JP's older format (``legacy_upgrade``)."""

from __future__ import annotations

import json

from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.stream.legacy_upgrade import LegacyUpgrade, legacy_upgrade
from turnmark.core.stream.payloads import ChatRequest
from turnmark.core.summaries.labels import ensure_first_turn_start

HEAD: JsonObject = {
    "type": "config_delta",
    "timestamp": "2026-01-02 10:00:00.0",
    "delta": {"assistant": {"name": "jp"}},
}
ENTRIES: list[JsonObject] = [
    {"type": "chat_request", "timestamp": "2026-01-02 10:00:01.0", "content": "Hi"},
    {"type": "chat_response", "timestamp": "2026-01-02 10:00:02.0", "message": "Hello."},
]


def load(entries: list[JsonObject], base_config: JsonObject | None = None) -> ConversationStream:
    events = json.dumps(entries).encode()
    base = None if base_config is None else json.dumps(base_config).encode()
    return ConversationStream.from_json(events, base, new_id=sequential_ids(), conversation="jp-c1").unwrap()


def test_a_legacy_stream_saved_as_read_has_its_config_split_out_and_every_id_stamped() -> None:
    loaded = load([HEAD, *ENTRIES])
    assert legacy_upgrade(loaded, loaded) == LegacyUpgrade(2, True, False)


def test_the_turn_start_catch_up_inserts_is_named_and_not_counted_as_stamped() -> None:
    loaded = load([HEAD, *ENTRIES])
    prepared = ensure_first_turn_start(loaded)
    assert legacy_upgrade(loaded, prepared) == LegacyUpgrade(2, True, True)


def test_entries_added_by_the_command_are_not_counted_as_stamped() -> None:
    loaded = load([HEAD, {"type": "turn_start", "timestamp": "2026-01-02 10:00:00.5"}, *ENTRIES])
    grown = loaded.start_turn(ChatRequest("2026-01-02 11:00:00.0", "Again"))
    assert legacy_upgrade(loaded, grown) == LegacyUpgrade(3, True, False)


def test_a_current_stream_is_no_upgrade() -> None:
    loaded = load(ENTRIES, {"assistant": {"name": "jp"}})
    assert legacy_upgrade(loaded, ensure_first_turn_start(loaded)) is None


def test_an_upgrade_a_kill_interrupted_has_its_config_already_split_out() -> None:
    delta = HEAD["delta"]
    assert isinstance(delta, dict)
    loaded = load([HEAD, *ENTRIES], delta)
    assert loaded.is_legacy
    upgrade = legacy_upgrade(loaded, loaded)
    assert upgrade == LegacyUpgrade(2, False, False)
    assert upgrade.describe() == "the legacy head entry removed, 2 event IDs stamped"


def test_the_json_shape_round_trips() -> None:
    upgrade = LegacyUpgrade(961, True, True)
    assert upgrade.to_json() == {"ids_stamped": 961, "config_split_out": True, "turn_start_inserted": True}
    assert LegacyUpgrade.from_json(upgrade.to_json()) == upgrade
    assert upgrade.describe() == (
        "base_config.json split out, 961 event IDs stamped, a turn_start inserted before the first turn"
    )

"""A large conversation for the SIGKILL probe: a fixture conversation repeated, every ID stored.

Every entry has its ``event_id`` and every turn its ``turn_start``, so nothing is
assigned at load and every run of ``summarize`` or ``label`` writes the same bytes.
Every copy's requests and answers are numbered, so no two turns get the same label:
the quality gate refuses a label repeated within one answer, which would make what a
run writes depend on how the turns were batched (and an interrupted run's batches differ).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

FIXTURE = (
    Path(__file__).resolve().parents[2]
    / "fixtures"
    / "workspace"
    / ".jp"
    / "conversations"
    / "17800000010-add-retry-backoff-to-the-stream-handler"
)
CONVERSATION_ID = 17810000000
START = datetime(2026, 6, 1, 10, 0, 0)


def _timestamp(moment: datetime) -> str:
    text = moment.strftime("%Y-%m-%d %H:%M:%S.%f").rstrip("0")
    return text + "0" if text.endswith(".") else text


def scaled_entries(copies: int) -> list[dict[str, Any]]:
    """The fixture's entries ``copies`` times over, with fresh IDs, links and timestamps, and no summaries."""
    template = json.loads((FIXTURE / "events.json").read_text(encoding="utf-8"))
    entries: list[dict[str, Any]] = []
    for copy in range(copies):
        renamed = {entry["event_id"]: f"e{copy:04d}{position:02d}" for position, entry in enumerate(template)}
        for position, original in enumerate(template):
            entry = json.loads(json.dumps(original))
            entry["event_id"] = renamed[original["event_id"]]
            if "request_id" in entry:
                entry["request_id"] = renamed[entry["request_id"]]
            entry["timestamp"] = _timestamp(START + timedelta(minutes=copy, seconds=position, microseconds=copy))
            if "id" in entry:
                entry["id"] = f"{entry['id']}_{copy}"
            if entry["type"] == "chat_request":
                entry["content"] = f"[{copy}] {entry['content']}"
            if entry["type"] == "chat_response" and isinstance(entry.get("message"), str):
                entry["message"] = f"[{copy}] {entry['message']}"
            entry.pop("summary", None)
            entries.append(entry)
    return entries


def conversation_dir(workspace: Path) -> Path:
    return workspace / ".jp" / "conversations" / f"{CONVERSATION_ID}-scaled-up"


def write_conversation(workspace: Path, copies: int, *, legacy: bool = False) -> Path:
    """A workspace holding the scaled conversation; returns the conversation's folder.

    ``legacy``: JP's older format, the base configuration as the first entry of ``events.json``
    and no ``base_config.json`` (the first save writes ``base_config.json``, then ``events.json``).
    """
    directory = conversation_dir(workspace)
    directory.mkdir(parents=True)
    (directory / "metadata.json").write_text(
        json.dumps({"title": "Scaled up", "last_activated_at": "2026-06-02 10:00:00.0"}, indent=2) + "\n"
    )
    entries = scaled_entries(copies)
    base_config = json.loads((FIXTURE / "base_config.json").read_text(encoding="utf-8"))
    if legacy:
        entries.insert(0, {"type": "config_delta", "timestamp": _timestamp(START), "delta": base_config})
    else:
        (directory / "base_config.json").write_text(json.dumps(base_config, indent=2) + "\n")
    (directory / "events.json").write_text(json.dumps(entries, indent=2, ensure_ascii=False) + "\n")
    return directory

"""The listing's layout and its version: the snapshot keeps what the layout printed under ``VERSION``, so what it
prints for the same rows may change only with ``VERSION``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from turnmark.core.summaries.waiting import Waiting
from turnmark.shell.cli import listing_layout
from turnmark.shell.storage.workspace import ConversationRef, Workspace
from turnmark.shell.storage.workspace_cache import ConversationRow, Facts
from turnmark.shell.usecases.listing import Listed

PRINTED = {"1": "a9adeb7384427e45545805f58a36d22177a30f612d27a17b95055b24134ce3f5"}
"""The digest of what each version prints for ``_listed()``: a new layout records its own under a new version."""
ROOT = Path("/home/user/project")
WORKSPACE = Workspace(ROOT, None)


def _listed() -> list[Listed]:
    """Rows of every kind the listing prints: plain, forked, legacy with link problems, a metadata problem,
    unreadable, no activity time, two candidates for the default on the same second."""
    facts = Facts(False, 12, 0, 0, None, Waiting())

    def row(number: int, **fields: Any) -> Listed:
        folder = ROOT / ".jp" / "conversations" / f"178000000{number:02d}-t"
        ref = ConversationRef(17_800_000_000 + number, folder, None, WORKSPACE)
        made = ConversationRow(ref.display_id, str(folder), None, None, 0, f"Title {number}", "2026-06-01 10:00:00.5")
        return Listed(ref, made._replace(turns=3, facts=facts)._replace(**fields))

    return [
        row(1, summarized_turns=2),
        row(2, forked_from="jp-c17800000001", last_activated_at="2026-06-02 09:00:00.0"),
        row(3, facts=Facts(True, 40, 5, 1, None, Waiting()), last_activated_at="2026-06-02 09:00:00.0"),
        row(4, facts=Facts(False, 7, 0, 0, "metadata.json: not JSON", Waiting()), title=None),
        row(5, problem="events.json: not JSON at line 1", facts=None),
        row(6, last_activated_at=None, title="Ünïcode\tand a tab"),
        Listed(ConversationRef(17_800_000_099, None, Path("/elsewhere/17800000099"), WORKSPACE), row(7).row),
    ]


def _printed() -> str:
    layout = listing_layout.ListingLayout(WORKSPACE)
    rows = [layout.row(listed) for listed in _listed()]
    document = {"text": layout.text(rows), "json": layout.json_rows(rows), "chrome": [row.chrome for row in rows]}
    return hashlib.sha256(json.dumps(document, ensure_ascii=False).encode()).hexdigest()


def test_what_the_layout_prints_changes_only_with_its_version() -> None:
    assert PRINTED.get(listing_layout.VERSION) == _printed(), (
        "what the listing prints changed: give listing_layout.VERSION a new value and record the new digest in "
        f"PRINTED ({_printed()}), so that no snapshot of the old layout is shown again"
    )


def test_the_default_is_the_latest_activity_then_the_higher_id() -> None:
    layout = listing_layout.ListingLayout(WORKSPACE)
    rows = [layout.row(listed) for listed in _listed()]
    marked = [row["id"] for row in layout.json_rows(rows) if row["default"]]
    assert marked == ["jp-c17800000003"]
    text = layout.text(rows).splitlines()
    assert text[3].startswith("jp-c17800000003* ")
    assert text[-1] == listing_layout.FOOTER
    assert [row.chrome for row in rows][3:5] == [
        "warning: metadata.json: not JSON",
        "error: events.json: not JSON at line 1",
    ]

"""How ``conversations`` prints a listing: each conversation's JSON object and text line, and the whole text.

The listing's snapshot keeps what this prints under ``VERSION``: change it with anything that changes what is
printed for the same rows (``tests/shell/cli/test_listing_layout.py`` fails until it is).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from turnmark.core.stream import timestamps
from turnmark.core.stream.conversation_ids import display_id
from turnmark.shell.storage.listing_snapshot import PrintedRow, Value
from turnmark.shell.storage.workspace import Workspace

if TYPE_CHECKING:
    from turnmark.shell.usecases.listing import Listed

VERSION = "1"
HEADER = f"{'ID':<17} {'ACTIVE':<10} {'TURNS':>5} {'SUMMARIZED':>10}  {'LINKS':<24} TITLE"
FOOTER = "* the conversation a command takes when CONV is not given (the most recently active)"


KEYS = (
    "id",
    "dirname",
    "title",
    "format",
    "path",
    "last_activated_at",
    "forked_from",
    "turns",
    "summarized_turns",
    "entries",
    "unresolved_links",
    "duplicated_ids",
    "metadata_error",
    "error",
)
"""A readable conversation's JSON object's keys, in order."""
UNREADABLE_KEYS = ("id", "dirname", "error")
"""An unreadable one's."""


def _values(workspace: Workspace, listed: Listed) -> tuple[Value, ...]:
    """A conversation's JSON values in the order of ``KEYS`` (``UNREADABLE_KEYS`` for one that cannot be read)."""
    ref, row = listed.ref, listed.row
    if row.problem is not None or row.facts is None:
        return ref.display_id, ref.dirname, row.problem
    facts = row.facts
    root = f"{workspace.root}{os.sep}"
    path = row.directory.removeprefix(root) if row.directory.startswith(root) else row.directory
    return (
        ref.display_id,
        os.path.basename(row.directory),
        row.title,
        "legacy" if facts.legacy else "current",
        path,
        row.last_activated_at,
        row.forked_from,
        row.turns,
        row.summarized_turns,
        facts.entries,
        facts.unresolved_links,
        facts.duplicated_ids,
        facts.metadata_error,
        None,
    )


def _json(values: tuple[Value, ...]) -> dict[str, Value]:
    return dict(zip(KEYS if len(values) == len(KEYS) else UNREADABLE_KEYS, values, strict=True))


def listing_json(workspace: Workspace, listed: Listed) -> dict[str, Value]:
    """A conversation's JSON object in the listing (``check --all`` takes its head from it too)."""
    return _json(_values(workspace, listed))


def _line(values: dict[str, Value], default: bool = False) -> str:
    marked = f"{values['id']}{'*' if default else ''}"
    if values.get("error"):
        return f"{marked:<17} {'-':<10} {'-':>5} {'-':>10}  {'unreadable':<24} {values['dirname']}"
    unresolved, duplicated = values["unresolved_links"], values["duplicated_ids"]
    problems = []
    if unresolved:
        problems.append(f"{unresolved} unresolved")
    if duplicated:
        problems.append(f"{duplicated} dup IDs")
    links = ", ".join(problems) or "ok"
    summarized = f"{values['summarized_turns']}/{values['turns']}"
    title = "(metadata.json unreadable)" if values["metadata_error"] else values["title"] or ""
    if values.get("forked_from"):
        title = f"⑂ {values['forked_from']}  {title}"
    active = str(values["last_activated_at"] or "-")[:10]
    return f"{marked:<17} {active:<10} {values['turns']!s:>5} {summarized:>10}  {links:<24} {title}"


def _default(rows: Sequence[PrintedRow]) -> str | None:
    """The display ID of the conversation a command takes when ``CONV`` is not given
    (``timestamps.most_recently_active``, from each row's ``activity_key``)."""
    latest = timestamps.latest_active(row.candidate for row in rows if row.candidate is not None)
    return None if latest is None else display_id(latest)


class ListingLayout:
    """``listing.Layout`` for ``workspace``'s listing."""

    version = VERSION

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def row(self, listed: Listed) -> PrintedRow:
        kept = _values(self.workspace, listed)
        values = _json(kept)
        line = _line(values)
        if values["error"] is not None:
            return PrintedRow(kept, line, None, f"error: {values['error']}")
        if values["metadata_error"]:
            return PrintedRow(kept, line, None, f"warning: {values['metadata_error']}")
        return PrintedRow(kept, line, timestamps.activity_key(str(values["last_activated_at"]), listed.ref.id), None)

    def text(self, rows: Sequence[PrintedRow]) -> str:
        default = _default(rows)
        lines = [HEADER, *(row.line if row.values[0] != default else _line(_json(row.values), True) for row in rows)]
        if default is not None:
            lines.append(FOOTER)
        return "\n".join(lines)

    @staticmethod
    def fits(row: PrintedRow) -> bool:
        """A readable conversation's values (no error) or an unreadable one's (an error): what ``text`` and
        ``json_rows`` take."""
        values = row.values
        if len(values) == len(KEYS):
            return values[-1] is None
        return len(values) == len(UNREADABLE_KEYS) and values[-1] is not None

    @staticmethod
    def json_rows(rows: Sequence[PrintedRow]) -> list[dict[str, Value]]:
        default = _default(rows)
        return [{**_json(row.values), "default": row.values[0] == default} for row in rows]

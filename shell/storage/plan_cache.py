"""Catch-up plans kept in the cache database, so a second ``summarize --all --dry-run`` reads no conversation.

A plan (a dry run's report, as JSON) is stored with a digest of everything it was made from: the
bytes of ``events.json`` (by the hash the workspace cache verified, or the identity it trusted), those
of ``base_config.json`` (by their hash), the run's configuration and options and whether a running ``jp``
held the conversation. Different inputs are a miss, never a wrong plan; a conversation's plan goes with its row.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable


def stored_plans(connection: sqlite3.Connection) -> dict[str, tuple[str, str]]:
    """Every stored plan by conversation: the digest of its inputs and the report (a row whose values are not all
    text is left out: a miss)."""
    return {
        conversation: (inputs, report)
        for conversation, inputs, report in connection.execute("SELECT conversation, inputs, report FROM plans")
        if type(conversation) is str and type(inputs) is str and type(report) is str
    }


def save_plans(connection: sqlite3.Connection, plans: Iterable[tuple[str, str, str]]) -> None:
    """Store ``(conversation, inputs, report)`` plans (inside the caller's transaction)."""
    connection.executemany("INSERT OR REPLACE INTO plans (conversation, inputs, report) VALUES (?, ?, ?)", plans)


def forget_plans(connection: sqlite3.Connection, conversations: Iterable[str]) -> None:
    """Drop the plans of conversations that no longer exist (inside the caller's transaction)."""
    connection.executemany("DELETE FROM plans WHERE conversation = ?", ((c,) for c in conversations))

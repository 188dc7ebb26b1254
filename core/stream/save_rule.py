"""The save rule: what turnmark never writes, decided once for every path that writes ``events.json``.

Three findings of ``check`` cannot be written back without losing or inventing something:

- a key written twice in one entry: the reader keeps the last value, so a save drops the
  other, and only a person can say which one stays;
- a ``request_id`` naming an ID that several entries carried (a copied request): a save
  binds it silently to whichever copy kept the ID; ``repair`` relinks it;
- a ``request_id`` naming the ID that stands in for an ``event_id`` that is not a string (RFD 097):
  the save keeps the value as written, so the link would name nothing; ``repair`` gives the entry its ID.

``save_blockers`` finds them in a conversation as read (load found the keys) and the stream
about to be written from it; ``refusal`` is the one line every writing command prints for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from turnmark.core.stream.codec import WRAPPER_KEYS
from turnmark.core.stream.json_document import json_text

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import AmbiguousLink, ConversationStream


@dataclass(frozen=True, slots=True)
class SaveBlocker:
    """One reason not to save: the entry (its index in ``events.json`` as read) and the key.

    ``target`` is where a ``request_id`` points (a link), or where in the entry the key is
    written twice (``(top)`` for the entry itself).
    """

    index: int
    event_id: str | None
    key: str
    target: str

    @property
    def repairable(self) -> bool:
        """``turnmark repair`` can fix it (a link); a key written twice is for a person to fix."""
        return self.key in WRAPPER_KEYS and self.event_id is not None


def _stand_in_links(written: ConversationStream) -> tuple[SaveBlocker, ...]:
    """Links to an ID that only stands in for an ``event_id`` the save writes back as it was read."""
    stand_ins = {
        entry.event_id: (position, entry.written("event_id")[1])
        for position, entry in enumerate(written.entries)
        if entry.id_origin == "stand_in"
    }
    if not stand_ins:
        return ()
    found: list[SaveBlocker] = []
    for entry in written.entries:
        target = stand_ins.get(entry.request_id) if entry.request_id else None
        if target is not None:
            position, value = target
            found.append(
                SaveBlocker(
                    written.file_index(position), written.entries[position].event_id, "event_id", json_text(value)
                )
            )
    return tuple(found)


def _read_index(read: ConversationStream, written: ConversationStream, link: AmbiguousLink) -> int:
    position = read.find(link.event_id)
    return read.file_index(position) if position is not None else written.file_index(link.index)


def save_blockers(read: ConversationStream, written: ConversationStream) -> tuple[SaveBlocker, ...]:
    """Why ``written`` (made from ``read``, as loaded from its file) must not be saved; keys first."""
    doubled = tuple(SaveBlocker(key.index, None, key.key, key.path) for key in read.doubled_keys)
    links = tuple(
        SaveBlocker(_read_index(read, written, link), link.event_id, "request_id", link.request_id)
        for link in written.ambiguous_links()
    )
    return doubled + links + _stand_in_links(written)


def refusal(blockers: tuple[SaveBlocker, ...], conversation: str, *, decide: bool) -> str:
    """The one line (after the file's name) saying why ``conversation`` is not saved, and what fixes it.

    ``decide``: repair's plan needs a person's decision for a link (``repair -i``), not just ``--apply``.
    """
    doubled = [blocker for blocker in blockers if not blocker.repairable]
    if doubled:
        first = doubled[0]
        inside = "" if first.target == "(top)" else f" (in {first.target})"
        more = f" ({len(blockers) - 1} more: turnmark check {conversation})" if len(blockers) > 1 else ""
        return (
            f"refusing to save: entry {first.index}: key {first.key!r} is written twice{inside}, and a save keeps "
            f"only the last value{more}; to fix: remove one of them from events.json by hand"
        )
    stand_ins = [blocker for blocker in blockers if blocker.key == "event_id"]
    if stand_ins:
        first = stand_ins[0]
        return (
            f"refusing to save: entry {first.index}'s event_id is {first.target}, not a string, so the link to it "
            f"would name nothing; to fix: turnmark repair {conversation} --apply (it gives the entry an event_id)"
        )
    named = ", ".join(f"entry {link.index} (event_id {link.event_id}) -> {link.target}" for link in blockers)
    fix = (
        f"turnmark repair -i {conversation} (it asks which request each answers)"
        if decide
        else f"turnmark repair {conversation} --apply (it links each to the copy in its own turn)"
    )
    return f"refusing to save: request_id points at an event_id that more than one entry had: {named}; to fix: {fix}"

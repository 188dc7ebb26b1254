"""``builtin/extractive``: the offline, deterministic turn summarizer.

It reads what a model would read (the request, the tools and their outcomes,
the final answer) and writes one specific line of at most 60 characters:

- a substantive request is summarized by its first line (markdown removed);
- a short follow-up ("continue", "yes, do option 2"), a pasted error or a
  quote of the assistant says little by itself, so the turn is described by
  what it did: the first sentence of the final answer, or, when that is empty
  or generic ("Done."), the files it edited and the tools it ran, with their
  failures.

It runs through the same pipeline as a remote model (same candidates, same
answer checks) and needs no network, so it is the default wherever no model
is configured.
"""

import re
from collections import Counter

from .entries import Entry
from .json_value import Json
from .payloads import ChatRequest, ChatResponse, ToolCallRequest, ToolCallResponse
from .summary_request import MAX_CHARS
from .transcript import described_events
from .turn_summary import cut_at_word, one_line
from .turns import Turn

_FOLLOW_UP_WORDS = frozenset(
    [
        "ok",
        "okay",
        "yes",
        "yep",
        "yeah",
        "sure",
        "please",
        "pls",
        "go",
        "do",
        "try",
        "continue",
        "proceed",
        "agreed",
        "lgtm",
        "thanks",
        "thank",
        "you",
        "great",
        "perfect",
        "nice",
        "cool",
        "good",
        "fine",
        "that",
        "it",
        "option",
        "again",
        "now",
        "ahead",
        "on",
        "and",
        "then",
        "with",
        "the",
        "this",
        "one",
        "next",
        "step",
        "same",
    ]
)
_ERROR_PASTE = re.compile(
    r"^\s*(?:error(?:\[\w+\])?:|warning:|thread '.*' panicked|traceback \(most recent call last\)|"
    r"failed|failures?:|test result: failed|\S+\.(?:rs|py|ts|js|go):\d+)",
    re.IGNORECASE | re.MULTILINE,
)
_MARKDOWN = re.compile(r"^\s*(?:#{1,6}\s+|>+\s*|[-*+]\s+|\d+[.)]\s+)+")
_INLINE = re.compile(r"`+|\*{1,3}|(?<!\w)_{1,3}(?=\w)|(?<=\w)_{1,3}(?!\w)")
_RULE = re.compile(r"^[\s\-=_*~`#|.:]*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])|\n")
_GENERIC = re.compile(r"^(?:done|ok(?:ay)?|sure|yes|great|perfect|all set|finished|complete[d]?)\W*$", re.IGNORECASE)
_EDITING_TOOLS = ("fs_modify_file", "fs_create_file", "fs_delete_file", "fs_move_file")


def _clean(line: str) -> str:
    if _RULE.match(line):
        return ""
    return one_line(_INLINE.sub("", _MARKDOWN.sub("", line)))


def _first_line(text: str) -> str:
    for line in text.split("\n"):
        cleaned = _clean(line)
        if cleaned:
            return cleaned
    return ""


_CODE_BLOCK = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)


def _first_sentence(text: str) -> str:
    for paragraph in _SENTENCE_END.split(_CODE_BLOCK.sub("", text).strip()):
        cleaned = _clean(paragraph)
        if cleaned and not cleaned.endswith(":"):
            return cleaned.rstrip(".")
    return ""


def is_follow_up(request: str) -> bool:
    """True when a request says little by itself: short assent, "continue", a paste, a quote."""
    stripped = request.strip()
    if not stripped or stripped.startswith((">", "```", "~~~")) or _ERROR_PASTE.search(stripped):
        return True
    words = re.findall(r"[\w']+", stripped.lower())
    return len(words) <= 6 and all(word in _FOLLOW_UP_WORDS or word.isdigit() or len(word) == 1 for word in words)


def _paths(arguments: Json) -> list[str]:
    if not isinstance(arguments, dict):
        return []
    found = [value for key, value in arguments.items() if key in ("path", "file", "target") and isinstance(value, str)]
    return [path.rstrip("/").rsplit("/", 1)[-1] for path in found if path.strip()]


def _what_it_did(events: list[Entry]) -> str:
    """Edited files and tools run, failures marked: "Edited stream.rs; cargo_test failed"."""
    edited: list[str] = []
    runs: Counter[str] = Counter()
    failed: list[str] = []
    names: dict[str, str] = {}
    for entry in events:
        payload = entry.payload
        if isinstance(payload, ToolCallRequest):
            names[payload.id] = payload.name
            if payload.name in _EDITING_TOOLS:
                edited += [path for path in _paths(payload.arguments) if path not in edited]
            else:
                runs[payload.name] += 1
        elif isinstance(payload, ToolCallResponse) and payload.is_error:
            name = names.get(payload.id, "a tool")
            failed += [] if name in failed else [name]
    parts = []
    if edited:
        parts.append("Edited " + ", ".join(edited[:3]) + (" and more" if len(edited) > 3 else ""))
    for name in failed:
        parts.append(f"{name} failed")
    ran = [name for name in runs if name not in failed and not name.startswith(("fs_read", "fs_list", "fs_grep"))]
    if ran:
        parts.append("ran " + ", ".join(ran[:3]))
    return "; ".join(parts)


def extractive_summary(turn: Turn, excluded: frozenset[str] = frozenset()) -> str | None:
    """One line (at most 60 characters) for ``turn``, or ``None`` when the turn holds nothing to describe.

    Like a transcript, it describes only the events a model sees (``excluded``: see ``excluded_ids``).
    """
    events = list(described_events(turn, excluded))
    requests = [e.payload.content for e in events if isinstance(e.payload, ChatRequest)]
    answers = [
        e.payload.value
        for e in events
        if isinstance(e.payload, ChatResponse) and e.payload.variant == "message" and e.payload.value.strip()
    ]
    request = requests[0] if requests else ""
    if request and not is_follow_up(request):
        line = _first_line(request)
    else:
        sentence = _first_sentence(answers[-1]) if answers else ""
        did = _what_it_did(events)
        line = sentence if sentence and not _GENERIC.match(sentence) else did or sentence or _first_line(request)
    if not line:
        return None
    first_word = line.split(" ", 1)[0]
    if first_word.isalpha() and first_word.islower():
        line = line[0].upper() + line[1:]
    return cut_at_word(line, MAX_CHARS)

"""``builtin/extractive``: the offline, deterministic turn summarizer.

It writes each turn a label in the style of a git commit subject (imperative, specific, at most 60
characters, no trailing period, never cut inside a word) from what a model would read of the turn:

- a request that gives an instruction (a title heading, "please add …", "can you fix …", "I want to
  refactor …") is labelled by that instruction, followed by the turn's key terms it lacks;
- any other turn (a follow-up such as "yes" or "continue", a question, a problem report, a
  discussion, a paste) by a verb for what the turn did (the answer's "Added …" -> "Add", else from
  its tool calls and its request) and its key terms (``core/key_terms.py``: the names and
  identifiers specific to this turn within the conversation);
- a "thanks" or "looks good" turn approves or thanks for the turn before it;
- no two turns of a conversation get the same label: the later one says what differs.

Greetings, quoted lines (the assistant's words being answered), pasted code and link targets are
left out. It runs through the same pipeline as a remote model (same candidates, same answer checks)
and needs no network, so it is the default wherever no model is configured.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from turnmark.core.stream.json_value import Json
from turnmark.core.stream.payloads import ChatRequest, ChatResponse, ToolCallRequest, ToolCallResponse
from turnmark.core.stream.turns import Turn
from turnmark.core.summaries.key_terms import STOP, key_terms, word_spread
from turnmark.core.summaries.label_text import (
    VERBS,
    as_request,
    base_form,
    heading,
    imperative,
    looks_like_problem,
    sentences,
    shorten,
    task,
    word_set,
)
from turnmark.core.summaries.request import MAX_CHARS
from turnmark.core.summaries.transcript import described_events

FOLLOW_UP_WORDS = word_set(
    "ok okay yes yep yeah sure please pls go do try continue proceed agreed lgtm thanks thank you great "
    "perfect nice cool good fine that it option again now ahead on and then with the this one next step "
    "same sounds looks right correct exactly go-ahead done keep going carry works is"
)
"""Words of a request that says nothing by itself ("yes, go ahead", "continue", "thanks")."""

INSTRUCTION_CHARS = 45
"""How much of a label an instruction may take; the rest is left for the turn's key terms."""

_THANKS = re.compile(r"^\W*(?:thanks?|thank you|thx|ty|cheers)\b", re.IGNORECASE)
_APPROVAL = re.compile(r"\b(?:looks? good|lgtm|great|perfect|works|ship it|nice)\b", re.IGNORECASE)
_ERROR_PASTE = re.compile(
    r"^\s*(?:error(?:\[\w+\])?:|warning:|thread '.*' panicked|traceback \(most recent call last\)|"
    r"test result: failed|\S+\.(?:rs|py|ts|js|go):\d+)",
    re.IGNORECASE | re.MULTILINE,
)
_WORD = re.compile(r"[A-Za-z_][\w.-]*[\w]|[A-Za-z]")
_OPENER = re.compile(
    r"^(?:done|ok(?:ay)?|sure|yes|great|perfect|all set|all (?:tests )?pass(?:ing|es)?|finished|complete[d]?|"
    r"looks (?:good|clean|correct|right)|everything (?:looks good|passes|works)|that'?s (?:it|done|more accurate)|"
    r"you'?re (?:welcome|right|absolutely right)|good (?:catch|point|question)|updated|fixed|here'?s\b.*|"
    r"now (?:i have|let me)\b.*|let me\b.*|i'?ll\b.*|i'?ve (?:traced|found|looked)\b.*|summary\b.*|"
    r"changes?\b.*|that should do it|both .* pass(?:ing)?)\W*$",
    re.IGNORECASE,
)
"""An answer's opening sentence that says nothing about the turn ("All passing.", "Here's what changed:")."""

_EDITING_TOOLS = ("fs_modify_file", "fs_create_file", "fs_delete_file", "fs_move_file")
_READING_PREFIXES = ("fs_read", "fs_list", "fs_grep", "github_read", "github_code_search", "git_show", "git_log")


@dataclass(frozen=True)
class TurnFacts:
    """What the summarizer reads of a turn: its request, its final answer, what it changed and ran."""

    request: str
    answer: str
    edited: tuple[str, ...]
    tools: tuple[str, ...]
    failed: tuple[str, ...]

    def words(self) -> list[str]:
        return [word.lower() for word in _WORD.findall(f"{self.request} {self.answer} {' '.join(self.edited)}")]


def turn_facts(turn: Turn, excluded: frozenset[str] = frozenset()) -> TurnFacts:
    """The request, the final answer, the files the turn changed and the tools it ran (failures too)."""
    events = list(described_events(turn, excluded))
    requests = [e.payload.content for e in events if isinstance(e.payload, ChatRequest)]
    answers = [
        e.payload.value
        for e in events
        if isinstance(e.payload, ChatResponse) and e.payload.variant == "message" and e.payload.value.strip()
    ]
    edited: list[str] = []
    tools: list[str] = []
    failed: list[str] = []
    names: dict[str, str] = {}
    for entry in events:
        payload = entry.payload
        if isinstance(payload, ToolCallRequest):
            names[payload.id] = payload.name
            if payload.name in _EDITING_TOOLS:
                edited += [path for path in _paths(payload.arguments) if path not in edited]
            elif not payload.name.startswith(_READING_PREFIXES) and payload.name not in tools:
                tools.append(payload.name)
        elif isinstance(payload, ToolCallResponse) and payload.is_error:
            name = names.get(payload.id, "a tool")
            failed += [] if name in failed else [name]
    return TurnFacts(
        requests[0] if requests else "", answers[-1] if answers else "", tuple(edited), tuple(tools), tuple(failed)
    )


def _paths(arguments: Json) -> list[str]:
    if not isinstance(arguments, dict):
        return []
    found = [value for key, value in arguments.items() if key in ("path", "file", "target") and isinstance(value, str)]
    return [path.rstrip("/").rsplit("/", 1)[-1] for path in found if path.strip()]


def is_follow_up(request: str) -> bool:
    """True when a request says little by itself: short assent, "continue", "thanks", a paste."""
    stripped = request.strip()
    if not stripped or _ERROR_PASTE.search(stripped) or not sentences(stripped):
        return True
    words = re.findall(r"[\w']+", stripped.lower())
    return len(words) <= 8 and all(word in FOLLOW_UP_WORDS or word.isdigit() or len(word) == 1 for word in words)


def instruction(request: str) -> str | None:
    """The instruction a request gives, as an imperative line: its title heading, or the first of its
    opening sentences that, once the asking is left out, starts with a verb ("Can you fix X?" -> "Fix X")."""
    if is_follow_up(request):
        return None
    title = heading(request)
    if title and not title.endswith("?"):
        return imperative(title)
    for sentence in sentences(request)[:6]:
        wanted = task(sentence).rstrip("?")
        first = wanted.split(" ", 1)[0].lower().strip(",:")
        words = wanted.split(" ")
        specific = [word for word in words[1:] if word.lower().strip(".,") not in STOP]
        if first in VERBS and len(words) >= 3 and specific and not sentence.endswith((":", "?")):
            return imperative(wanted)
    return None


_ADVERB = re.compile(r"^(?:(?:also|then|now|finally|next|so|ok(?:ay)?|done)[,.!]?\s+|i(?:'ve| have)?\s+)+", re.I)


def telling_sentence(answer: str) -> str | None:
    """The first of an answer's opening sentences that says something about the turn (not "All passing.")."""
    for sentence in sentences(answer)[:4]:
        if not (_OPENER.match(sentence) or sentence.endswith(":") or len(sentence.split(" ")) < 3):
            return sentence
    return None


def accomplished(facts: TurnFacts) -> str | None:
    """What the final answer says the turn did, when it opens with it ("Also capped the backoff at 2 s")."""
    sentence = telling_sentence(facts.answer)
    if sentence is None:
        return None
    done = _ADVERB.sub("", sentence)
    return imperative(done) if base_form(done.split(" ", 1)[0]) else None


def question(request: str) -> str | None:
    """A short request that is a question, as what it asks for ("Where do conversations live on disk?")."""
    found = sentences(request)
    if not found or not found[0].endswith("?"):
        return None
    asked = task(found[0])
    return as_request(asked) if len(asked.split(" ")) <= 12 else None


def verb_of(facts: TurnFacts) -> str:
    """The verb for what a turn did: the answer's opening past tense ("Added" -> "Add"), else from its
    tool calls and its request."""
    for sentence in sentences(facts.answer)[:4]:
        verb = base_form(sentence.split(" ", 1)[0])
        if verb is not None:
            return verb
    if looks_like_problem(facts.request) and not is_follow_up(facts.request):
        return "Fix" if facts.edited else "Investigate"
    if facts.edited:
        return "Update"
    if facts.tools:
        return "Run"
    if "?" in facts.request:
        return "Explain"
    return "Discuss"


def from_terms(verb: str, terms: Sequence[str], text: str, limit: int) -> str:
    """``verb`` and the best terms that fit, in the order ``text`` first mentions them."""
    chosen: list[str] = []
    for term in terms[:6]:
        if len(verb) + sum(len(word) + 1 for word in [*chosen, term]) <= limit:
            chosen.append(term)
    lowered = text.lower()
    chosen.sort(key=lambda term: lowered.find(term.lower()) % (len(lowered) + 1))
    return " ".join([verb, *chosen])


def with_terms(line: str, terms: Sequence[str], limit: int) -> str:
    """``line: term, term`` with the key terms it lacks, as many as fit (at most three)."""
    missing = [term for term in terms if term.lower() not in line.lower()][:3]
    result = line
    for term in missing:
        trial = f"{result}{', ' if result != line else ': '}{term}"
        if len(trial) <= limit:
            result = trial
    return result


def outcome(facts: TurnFacts) -> str | None:
    """What the turn did, from its final answer's first telling sentence, else from its tool calls."""
    sentence = telling_sentence(facts.answer)
    if sentence is not None:
        return imperative(sentence)
    parts = ["Update " + ", ".join(facts.edited[:3])] if facts.edited else []
    ran = [name + (" (failed)" if name in facts.failed else "") for name in facts.tools[:3]]
    if ran:
        parts.append(("run " if parts else "Run ") + ", ".join(ran))
    return "; ".join(parts) or None


def acknowledgement(facts: TurnFacts, previous: str | None, changed: bool) -> str | None:
    """A "thanks" or "looks good" turn that did nothing: it approves the turn before (when that turn
    changed something) or thanks for it."""
    if not (_THANKS.match(facts.request) or _APPROVAL.search(facts.request)) or not is_follow_up(facts.request):
        return None
    if facts.edited or facts.tools:
        return None
    verb = "Approve" if changed else "Thank for"
    if not previous:
        return f"{verb} the previous answer"
    return shorten(f"{verb}: {previous.split(': ', 1)[0]}", MAX_CHARS)


def label_of(
    facts: TurnFacts,
    spread: Mapping[str, int] | None = None,
    turns: int = 1,
    previous: tuple[str | None, TurnFacts | None] = (None, None),
) -> str | None:
    """The label of one turn, before it is made distinct from the others (``spread``: in how many of the
    conversation's ``turns`` each word appears; ``previous``: the label and facts of the turn before)."""
    before, before_facts = previous
    changed = before_facts is not None and bool(before_facts.edited)
    acknowledged = acknowledgement(facts, before, changed)
    if acknowledged is not None:
        return acknowledged
    asking = "" if is_follow_up(facts.request) else facts.request
    terms = key_terms(asking, facts.answer, facts.edited, spread or {}, turns)
    instructed = instruction(facts.request) or question(facts.request)
    instructed = instructed or (accomplished(facts) if is_follow_up(facts.request) else None)
    if instructed is not None:
        if len(instructed) > INSTRUCTION_CHARS:
            return shorten(instructed, MAX_CHARS)
        return with_terms(instructed, terms, MAX_CHARS)
    if terms:
        failed = f"; {facts.failed[0]} failed" if facts.failed else ""
        line = from_terms(verb_of(facts), terms, f"{facts.request} {facts.answer}", MAX_CHARS - len(failed))
        return line + failed
    fallback = outcome(facts) if is_follow_up(facts.request) else None
    if fallback is None and not is_follow_up(facts.request):
        first = sentences(facts.request)[0]
        fallback = as_request(task(first)) if first.endswith("?") else imperative(task(first))
    return shorten(imperative(fallback), MAX_CHARS) if fallback else None


def extractive_labels(turns: Sequence[Turn], excluded: frozenset[str] = frozenset()) -> dict[str, str]:
    """A label for every turn of a conversation (by turn ID), no two alike.

    Each label depends only on the conversation's turns, never on which of them already carry a
    summary, so a catch-up that is interrupted and resumed writes what an uninterrupted one writes.
    """
    facts = {turn.id(): turn_facts(turn, excluded) for turn in turns if turn.id() is not None}
    spread = word_spread(fact.words() for fact in facts.values())
    used: set[tuple[str, ...]] = set()
    labels: dict[str, str] = {}
    previous: tuple[str | None, TurnFacts | None] = (None, None)
    for turn in turns:
        turn_id = turn.id()
        if turn_id is None:
            continue
        line = label_of(facts[turn_id], spread, len(facts), previous)
        if line is not None:
            if same_words(line) in used:
                line = _distinct(line, facts[turn_id], spread, len(facts), used)
            used.add(same_words(line))
            labels[turn_id] = line
        previous = (line, facts[turn_id])
    return labels


def same_words(label: str) -> tuple[str, ...]:
    """What makes two labels the same: their words, case and punctuation aside."""
    return tuple(re.findall(r"\w+", label.casefold()))


def _distinct(line: str, facts: TurnFacts, spread: Mapping[str, int], turns: int, used: set[tuple[str, ...]]) -> str:
    """``line`` made different from the labels in ``used``: it says what differs, the turn's most specific
    term the line lacks (or, for a turn that repeats another word for word, its position among them)."""
    terms = key_terms(facts.request, facts.answer, facts.edited, spread, turns)
    suffixes = [f"({term})" for term in terms[:5] if term.lower() not in line.lower()]
    suffixes += [f"(again, {number})" for number in range(2, 1000)]
    for suffix in suffixes:
        head = shorten(line, MAX_CHARS - len(suffix) - 1).removesuffix("…").rstrip(" ,;:")
        candidate = f"{head} {suffix}"
        if same_words(candidate) not in used:
            return candidate
    return line


def extractive_summary(turn: Turn, excluded: frozenset[str] = frozenset()) -> str | None:
    """One line (at most 60 characters) for ``turn`` alone, or ``None`` when it holds nothing to describe.

    Like a transcript, it describes only the events a model sees (``excluded``: see ``excluded_ids``).
    """
    turn_id = turn.id()
    if turn_id is None:
        return label_of(turn_facts(turn, excluded))
    return extractive_labels([turn], excluded).get(turn_id)

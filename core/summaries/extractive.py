"""``builtin/extractive``: the offline, deterministic turn labeller (issue 32).

One principle: keep the user's own words when they carry the turn, synthesize only when they do not.

- A request that states a task is labelled by its opening heading or the first sentence that states it,
  without the asking around it ("lets", "can we", "please", "I want you to"): nothing is taken from
  inside the phrase, no verb is added, and a long one is cut at a word with ``…``. A request that
  states no task is labelled by its first question, else its first sentence.
- A follow-up (``yes``, ``continue``, ``go ahead with 4``, ``option B``, ``thanks``, a pasted error,
  a quoted passage) is resolved from what it answers (the option or numbered item of the answer before
  it picks, the offer it accepts) and from what the turn did (the answer's first statement, the files
  it changed, the tools it ran).
- A "thanks" or "looks good" that did no work says so, naming the turn it thanks for.
- No two turns of a conversation get the same label.

It reads only the events a model would see, needs no network, and is the default without a model.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from turnmark.core.stream.payloads import ChatRequest, ChatResponse, ToolCallRequest, ToolCallResponse
from turnmark.core.stream.turns import Turn
from turnmark.core.summaries.label_text import (
    VERBS,
    capitalized,
    clean_line,
    heading,
    imperative,
    plain,
    sentences,
    shorten,
    without_asking,
    word_set,
)
from turnmark.core.summaries.request import MAX_CHARS
from turnmark.core.summaries.transcript import described_events

EDITING_TOOLS = ("fs_modify_file", "fs_create_file", "fs_delete_file", "fs_move_file")


@dataclass(frozen=True)
class TurnFacts:
    """What the labeller reads of a turn: its request, its final answer, what it changed and ran."""

    request: str
    answer: str
    edited: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()


def turn_facts(turn: Turn, excluded: frozenset[str] = frozenset()) -> TurnFacts:
    """The first request, the last answer, the files changed (by name) and the other tools run (failures too)."""
    requests: list[str] = []
    answers: list[str] = []
    edited: dict[str, None] = {}
    tools: dict[str, None] = {}
    failed: dict[str, None] = {}
    names: dict[str, str] = {}
    for entry in described_events(turn, excluded):
        payload = entry.payload
        if isinstance(payload, ChatRequest):
            requests.append(payload.content)
        elif isinstance(payload, ChatResponse) and payload.variant == "message" and payload.value.strip():
            answers.append(payload.value)
        elif isinstance(payload, ToolCallRequest):
            names[payload.id] = payload.name
            arguments = payload.arguments if isinstance(payload.arguments, dict) else {}
            paths = [arguments.get(key) for key in ("path", "file", "target")]
            if payload.name in EDITING_TOOLS:
                edited.update((path.rstrip("/").rsplit("/", 1)[-1], None) for path in paths if isinstance(path, str))
            elif not re.search(r"(?:^|_)(?:read|list|grep|search|find|fetch|show|log|status|diff)", payload.name):
                tools[payload.name] = None
        elif isinstance(payload, ToolCallResponse) and payload.is_error:
            failed[names.get(payload.id, "a tool")] = None
    return TurnFacts(
        requests[0] if requests else "", answers[-1] if answers else "", tuple(edited), tuple(tools), tuple(failed)
    )


FOLLOW_UP_WORDS = word_set(
    "ok okay yes yep yeah sure please pls go do try continue proceed agreed lgtm thanks thank you great "
    "perfect nice cool good fine that it option item number again now ahead on and then with the this one "
    "next same sounds looks right correct exactly done keep going carry works is let's lets first do it"
)
"""Words of a request that says nothing by itself ("yes, go ahead", "continue", "thanks")."""
_ERROR = re.compile(
    r"^[^\S\n]*(?:error(?:\[\w+\])?:|warning:|thread '.*' panicked|traceback \(most recent call last\)|\S+\.\w+:\d+)",
    re.IGNORECASE | re.MULTILINE,
)
"""A line that opens (after its indent) as an error, a warning, a panic, a traceback or a ``file.ext:line``. The
indent stops at the line's end: an indent of any whitespace crossed line feeds, so each line of a run of blank
lines scanned the rest of the run (a message of 140,000 line feeds took minutes); the line it finds and where
the match ends are the same (``test_offline_labels.py``)."""


@lru_cache(maxsize=1024)
def is_follow_up(request: str) -> bool:
    """A request that says little by itself: assent, "continue", a pick, thanks, a paste, a quote."""
    words = re.findall(r"[\w']+", " ".join(sentences(request)).lower())
    if _ERROR.search(request) and len(words) <= 12:
        return True
    if len(words) <= 10 and "?" not in request and re.search(r"\b(?:it|that|this|them)\W*$", request.lower()):
        return True
    return len(words) <= 8 and all(word in FOLLOW_UP_WORDS or word.isdigit() or len(word) == 1 for word in words)


VAGUE = word_set(
    "i me my we us our you your it its this that these those there here what why how which who when where "
    "is are was were be been do does did can could would should will might must have has had any some "
    "idea ideas thought thoughts clue clues cause causing reason out know think see let look not no give tell "
    "overview summary explanation help find why here there yes yeah ok okay sure "
    "a an the and or but of to in on at by for with from as so if then just also still"
)
"""Words that name nothing: a sentence made of them points elsewhere ("Can you find out why?")."""


def content(sentence: str) -> int:
    """How many words of ``sentence`` name something."""
    return sum(word not in VAGUE for word in re.findall(r"[\w'@./-]+", sentence.lower()))


def stated_task(request: str) -> str | None:
    """The user's words that carry the request: its opening heading, the first sentence that states a task
    (asking left out; one that names nothing after the sentence that names what it is about), else the
    first question that names something, else the first such sentence."""
    title = heading(request)
    if title and len(title.split()) >= 2:
        return title.rstrip(":")
    said = [sentence.rstrip(".!") for sentence in sentences(request)[:8] if len(sentence.split()) >= 2]
    named = [sentence for sentence in said if content(sentence) >= 2]
    for sentence in said:
        task, asked = without_asking(sentence)
        words = task.rstrip("?").split(" ")
        if (asked or words[0].lower() in VERBS) and len(words) >= 2 and not task.endswith(":"):
            if (content(task) < 2 or words[1].lower() in ("it", "this", "that")) and named[:1] != [sentence]:
                return (
                    f"{named[0].rstrip(':')}; {task[:1].lower()}{task[1:].rstrip('?')}" if named else capitalized(task)
                )
            return capitalized(task.rstrip("?"))
    fallback = named or said or list(sentences(request)[:1])
    chosen = next((sentence for sentence in named if sentence.endswith("?")), fallback[0] if fallback else None)
    return capitalized(without_asking(chosen)[0]).rstrip(":") if chosen else None


_PICK = re.compile(
    r"\b(?:option|item|number|step|with|do|go|try|pick|take|use|start with)\s+#?(\d{1,2}|[A-H])\b(?![.\d])"
    r"|^\W*#?(\d{1,2}|[A-H])\W*$",
    re.IGNORECASE,
)
_ITEM = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?(?:[-*+][ \t]+)?(?:\*\*|__)?(?:option[ \t]+)?(?P<key>[A-H]|\d{1,2})(?:\*\*|__)?"
    r"[ \t]*(?:[.):]|[ \t]+[-—:])[ \t]*(?P<text>.+)$",
    re.IGNORECASE | re.MULTILINE,
)
_ITEM_END = re.compile(r"\*\*(?!$)|__|\s[-—–]\s|:\s|(?<=[a-z)`])\.(?:\s|$)|\?(?:\s|$)")


def picked(request: str) -> list[str]:
    """The options or items a request picks ("go with option B" -> ["B"], "2 first, then 1" -> ["2", "1"])."""
    keys = [(match.group(1) or match.group(2)).upper() for match in _PICK.finditer(plain(request))]
    if keys and keys[0].isdigit():
        keys += re.findall(r"(?<![\d.])\d{1,2}(?![\d.])", plain(request))
    return list(dict.fromkeys(keys))


def answer_items(answer: str) -> dict[str, str]:
    """An answer's options and numbered items by key ("B", "3"), each as its title."""
    items: dict[str, str] = {}
    for match in _ITEM.finditer(plain(answer)):
        title = clean_line(_ITEM_END.split(match.group("text").strip().lstrip("*_ "), 1)[0]).strip(" .:,")
        if any(char.isalpha() for char in title):
            items.setdefault(match.group("key").upper(), title)
    return items


_OFFER = re.compile(
    r"^(?:(?:so|then|ok(?:ay)?),?\s+)?(?:do you want me to|want me to|would you like me to|shall i|should i|"
    r"i can|i could|i'?d suggest|i suggest|i'?d recommend|i recommend|next,? i'?ll)\s+(?P<task>.+)$",
    re.IGNORECASE,
)


def offer(answer: str) -> str | None:
    """What an answer offers to do next ("Want me to draft an RFD?" -> "Draft an RFD")."""
    for sentence in reversed(sentences(answer)[-4:]):
        match = _OFFER.match(sentence)
        if match:
            wanted = re.split(r"\?|,? or (?:should|do|would|shall) ", match.group("task"), maxsplit=1)[0]
            return capitalized(wanted.rstrip(" .:!"))
    return None


_ADVERB = re.compile(r"^(?:(?:also|then|now|finally|next|so|ok(?:ay)?|done|i(?:'ve| have)?)[,.!]?\s+)+", re.I)


def statement(answer: str) -> str | None:
    """The answer's first statement of what it did, as an imperative ("Also capped X." -> "Cap X")."""
    for sentence in sentences(answer)[:4]:
        done = imperative(_ADVERB.sub("", sentence))
        if done is not None and len(done.split()) >= 2:
            return done
    return None


def work(facts: TurnFacts) -> str | None:
    """What the turn did, from its tool calls: the file it changed (and how many more), else the tools it ran;
    the first that failed."""
    more = f" and {len(facts.edited) - 1} more" if len(facts.edited) > 1 else ""
    failed = f"; {facts.failed[0]} failed" if facts.failed else ""
    if facts.edited:
        return f"Update {facts.edited[0]}{more}{failed}"
    ran = [f"{name} (failed)" if name in facts.failed else name for name in facts.tools[:2]]
    return f"Run {', '.join(ran)}" if ran else None


_THANKS = re.compile(r"\b(?:thanks?|thank you|thx|cheers)\b", re.IGNORECASE)
_APPROVAL = re.compile(r"\b(?:looks? good|lgtm|perfect|works|great|nice|ship it)\b", re.IGNORECASE)


def acknowledged(facts: TurnFacts, before: tuple[str | None, TurnFacts | None]) -> str | None:
    """A thanks or approval that did no work: "Approve <the turn before>" when that turn changed files,
    else "Thanks for <the turn before>"."""
    said = " ".join(sentences(facts.request))
    if facts.edited or facts.tools or not (_THANKS.search(said) or _APPROVAL.search(said)):
        return None
    label, facts_before = before
    verb = "Approve" if facts_before is not None and facts_before.edited and _APPROVAL.search(said) else "Thanks for"
    first, _, rest = (label or "").partition(" ")
    if not label or first in ("Approve", "Thanks"):
        return f"{verb} the answer" if verb == "Thanks for" else "Approve the change"
    if first.lower() not in VERBS or not rest:
        return shorten(f"{verb.split(maxsplit=1)[0]}: {label}", MAX_CHARS)
    return shorten(f"{verb} {gerund(first)} {rest}", MAX_CHARS)


def gerund(verb: str) -> str:
    """The ``-ing`` form of an imperative verb ("Explain" -> "explaining", "Run" -> "running")."""
    word = verb.lower()
    if word.endswith("e") and not word.endswith(("ee", "ye", "oe")):
        return word[:-1] + "ing"
    doubled = len(word) in (3, 4) and word[-1] not in "aeiouwxy" and word[-2] in "aeiou" and word[-3] not in "aeiou"
    return word + (word[-1] if doubled or word in ("commit", "submit") else "") + "ing"


def resolved(facts: TurnFacts, before: TurnFacts | None) -> str | None:
    """A follow-up by what it answers: the picked option or item of the answer before (named by its key),
    the accepted offer, a quoted passage; else by what the turn did."""
    keys = picked(facts.request)
    items = answer_items(before.answer) if before is not None and keys else {}
    chosen = [key for key in keys if key in items]
    if chosen:
        noun = "option" if chosen[0].isalpha() or "option" in facts.request.lower() else "item"
        note = f"({noun}{'s' if len(chosen) > 1 else ''} {', '.join(chosen)})"
        return f"{shorten(capitalized(items[chosen[0]]), MAX_CHARS - len(note) - 1).removesuffix('…')} {note}"
    done = statement(facts.answer)
    offered = offer(before.answer) if before is not None else None
    found = offered or done
    quoted = re.findall(r"^[ \t]*>[ \t]*(.*\w.*)$", facts.request, re.MULTILINE)
    pasted = _ERROR.search(facts.request)
    found = found or (clean_line(quoted[0]) if quoted else None) or work(facts)
    return found or (clean_line(pasted.group(0) + facts.request[pasted.end() :].split("\n", 1)[0]) if pasted else None)


_WHAT_NEXT = re.compile(
    r"^\W*(?:so,? )?(?:what(?:'s| is| are)? (?:the )?next(?: steps?)?|what else|what is left)\W*$", re.I
)


def next_steps(facts: TurnFacts) -> str | None:
    """A question about what comes next, by the first two items the answer lists ("Next steps: A, B")."""
    titles = list(answer_items(facts.answer).values())[:2] if _WHAT_NEXT.match(facts.request) else []
    return shorten(f"Next steps: {', '.join(titles)}", MAX_CHARS) if len(titles) == 2 else None


def label_of(facts: TurnFacts, before: tuple[str | None, TurnFacts | None] = (None, None)) -> str | None:
    """The label of one turn (``before``: the label and facts of the turn before it)."""
    if _WHAT_NEXT.match(facts.request):
        line = next_steps(facts) or stated_task(facts.request)
    elif is_follow_up(facts.request):
        line = acknowledged(facts, before) or resolved(facts, before[1]) or stated_task(facts.request)
    else:
        line = stated_task(facts.request) or statement(facts.answer) or work(facts)
    return shorten(line, MAX_CHARS) if line else None


def extractive_labels(turns: Sequence[Turn], excluded: frozenset[str] = frozenset()) -> dict[str, str]:
    """A label for every turn of a conversation (by turn ID), no two alike. A label depends only on the
    conversation's turns, never on which already carry a summary."""
    labels: dict[str, str] = {}
    used: set[tuple[str, ...]] = set()
    before: tuple[str | None, TurnFacts | None] = (None, None)
    for turn in turns:
        turn_id = turn.id()
        if turn_id is None:
            continue
        facts = turn_facts(turn, excluded)
        line = label_of(facts, before)
        if line is not None:
            line = distinct(line, facts, used)
            used.add(same_words(line))
            labels[turn_id] = line
        before = (line, facts)
    return labels


def same_words(label: str) -> tuple[str, ...]:
    """What makes two labels the same: their words, case and punctuation aside."""
    return tuple(re.findall(r"\w+", label.casefold()))


def distinct(line: str, facts: TurnFacts, used: set[tuple[str, ...]]) -> str:
    """``line``, or, when another turn has it, ``line`` with what this turn did, else its position."""
    if same_words(line) not in used:
        return line
    done = statement(facts.answer) or work(facts)
    suffixes = [f"; {done[:1].lower()}{done[1:]}"] if done and done.lower() not in line.lower() else []
    for suffix in [*suffixes, *(f" (again, {number})" for number in range(2, 1000))]:
        candidate = shorten(line, MAX_CHARS - len(suffix)).removesuffix("…") + suffix
        if len(candidate) <= MAX_CHARS and same_words(candidate) not in used:
            return candidate
    return line


def extractive_summary(turn: Turn, excluded: frozenset[str] = frozenset()) -> str | None:
    """One label (at most 60 characters) for ``turn`` alone, or ``None`` when it holds nothing to describe."""
    turn_id = turn.id()
    if turn_id is None:
        return label_of(turn_facts(turn, excluded))
    return extractive_labels([turn], excluded).get(turn_id)

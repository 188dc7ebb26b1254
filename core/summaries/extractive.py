"""``builtin/extractive``: the offline, deterministic turn summarizer.

It writes each turn a label in the style of a git commit subject (imperative, specific, at most 60
characters, no trailing period, never cut inside a word) from what a model would read of the turn:

- a turn that made a commit is labelled by its subject ("Commit config fix: honor …"), one that
  drafted a document by its number and title ("Draft RFD 031: …");
- a follow-up that points back ("go with option B", "go ahead with 4", "yes" to "Want me to …?")
  takes its object from the option, numbered item or offer of the answer before, or from an issue an
  earlier answer listed ("and issue 5, what can we do there?");
- moving on to a phase of a plan implements it ("Implement RFD 052 phase 2"); a question about what
  is left is labelled by the answer's steps or its ticked-off task list; an answer that weighs options
  and recommends one proposes it;
- a request that gives an instruction (a title heading, "please add …", "can you fix …", "I want to
  refactor …") is labelled by that instruction ("it" named by the sentence before; one that names
  nothing, in a request that says more, leaves the label to what the request reports);
- any other turn (a question, a problem report, a discussion, a paste) by a verb for what the turn
  did (the answer's "Added …" -> "Add", else from its edits, tool calls and request) and what it
  acted on: the request's words around its best term (``core/key_terms.py``: the names and
  identifiers specific to this turn within the conversation);
- a "thanks" or "looks good" turn approves or thanks for the turn before it ("Thank for explaining …");
- a label is a phrase: no word twice in a row, at most two identifiers (``readability.py``);
- no two turns of a conversation get the same label: the later one says what differs.

Greetings, quoted lines (the assistant's words being answered), pasted code and link targets are
left out. It runs through the same pipeline as a remote model (same candidates, same answer checks)
and needs no network, so it is the default wherever no model is configured.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import chain

from turnmark.core.stream.json_value import Json
from turnmark.core.stream.payloads import ChatRequest, ChatResponse, ToolCallRequest, ToolCallResponse
from turnmark.core.stream.turns import Turn
from turnmark.core.summaries.key_terms import COMMON, GENERIC, STOP, key_terms, word_spread
from turnmark.core.summaries.label_text import (
    VERBS,
    as_request,
    base_form,
    clean_line,
    gerund,
    heading,
    imperative,
    looks_like_problem,
    plain,
    sentence_case,
    sentences,
    shorten,
    task,
    without_repeats,
    word_set,
)
from turnmark.core.summaries.readability import MAX_IDENTIFIERS, identifier_like
from turnmark.core.summaries.request import MAX_CHARS
from turnmark.core.summaries.transcript import described_events

FOLLOW_UP_WORDS = word_set(
    "ok okay yes yep yeah sure please pls go do try continue proceed agreed lgtm thanks thank you great "
    "perfect nice cool good fine that it option again now ahead on and then with the this one next step "
    "same sounds looks right correct exactly go-ahead done keep going carry works is"
)
"""Words of a request that says nothing by itself ("yes, go ahead", "continue", "thanks")."""

QUESTION_WORDS = 12
"""The longest question (in words) a label asks for; a longer one is a discussion."""

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
_READING_WORDS = frozenset({"read", "list", "grep", "search", "find", "fetch", "show", "log", "status", "diff", "view"})


def _reads(tool: str) -> bool:
    """A tool that only reads or searches (``fs_read_file``, ``web_search``, ``git_diff``)."""
    return tool.startswith(_READING_PREFIXES) or bool(_READING_WORDS & set(re.split(r"[_\-.]", tool.lower())))


@dataclass(frozen=True)
class TurnFacts:
    """What the summarizer reads of a turn: its request, its final answer, what it changed and ran."""

    request: str
    answer: str
    edited: tuple[str, ...]
    tools: tuple[str, ...]
    failed: tuple[str, ...]
    committed: str | None = None
    """The subject line of a commit the turn made."""
    drafted: str | None = None
    """The title of a document (an RFD, a plan) a drafting tool wrote."""
    documents: tuple[str, ...] = ()
    """Markdown documents the turn wrote, as their numbered name ("RFD 031") when they have one."""
    ended_failing: str | None = None
    """The tool whose error was the turn's last tool result."""

    @property
    def planned(self) -> bool:
        """The turn wrote a plan (a Markdown file named for one)."""
        return any("plan" in name.lower() and name.lower().endswith(".md") for name in self.edited)

    def words(self) -> list[str]:
        return [word.lower() for word in _WORD.findall(f"{self.request} {self.answer} {' '.join(self.edited)}")]

    @cached_property
    def issues(self) -> dict[str, str]:
        """The issues the answer lists ("Issue 5: …"), by number, read once however many turns look back at it."""
        return answer_items(self.answer, "issue")


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
    committed = drafted = ended_failing = None
    for entry in events:
        payload = entry.payload
        if isinstance(payload, ToolCallRequest):
            names[payload.id] = payload.name
            committed = committed or _argument(payload, "commit", "message")
            drafted = drafted or _argument(payload, "draft", "title")
            if payload.name in _EDITING_TOOLS:
                edited += [path for path in _paths(payload.arguments) if path not in edited]
            elif not _reads(payload.name) and payload.name not in tools:
                tools.append(payload.name)
        elif isinstance(payload, ToolCallResponse):
            name = names.get(payload.id, "a tool")
            failed += [] if name in failed or not payload.is_error else [name]
            ended_failing = name if payload.is_error else None
    documents = tuple(dict.fromkeys(name for name in map(document_name, edited) if name))
    return TurnFacts(
        requests[0] if requests else "",
        answers[-1] if answers else "",
        tuple(edited),
        tuple(tools),
        tuple(failed),
        committed,
        drafted,
        documents,
        ended_failing,
    )


def _argument(call: ToolCallRequest, kind: str, key: str) -> str | None:
    """The first line of argument ``key`` of a tool whose name says ``kind`` ("git_commit"'s message)."""
    value = call.arguments.get(key) if isinstance(call.arguments, dict) else None
    if kind not in call.name.lower() or not isinstance(value, str):
        return None
    first = next((line.strip() for line in value.splitlines() if line.strip()), "")
    return first or None


_NUMBERED_DOCUMENT = re.compile(r"^(\d{2,4})-[\w-]+\.md$", re.IGNORECASE)


def document_name(file: str) -> str | None:
    """A numbered design document's name ("031-durable-storage.md" -> "RFD 031"), or ``None``."""
    match = _NUMBERED_DOCUMENT.match(file)
    return f"RFD {match.group(1)}" if match else None


def _paths(arguments: Json) -> list[str]:
    if not isinstance(arguments, dict):
        return []
    found = [value for key, value in arguments.items() if key in ("path", "file", "target") and isinstance(value, str)]
    return [path.rstrip("/").rsplit("/", 1)[-1] for path in found if path.strip()]


@lru_cache(maxsize=1024)
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
    said = sentences(request)[:6]
    for at, sentence in enumerate(said):
        wanted = task(sentence).rstrip("?")
        first = wanted.split(" ", 1)[0].lower().strip(",:")
        words = wanted.split(" ")
        if at and len(words) > 1 and words[1].lower() in ("it", "this", "that", "them"):
            subject = sentence_subject(said[at - 1])
            words = [words[0], subject, *words[2:]] if subject else words
            wanted = " ".join(words)
        specific = [word for word in words[1:] if _specific(word)]
        named = specific or len(said) == 1
        if first in VERBS and len(words) >= 3 and named and not sentence.endswith((":", "?")):
            return imperative(wanted)
    return None


VAGUE = word_set(
    "overview summary cause causes reason reasons thoughts explanation insight insights clue clues idea ideas "
    "fix fixes solution solutions"
)
"""Nouns that ask for something without naming what it is about ("give me an overview", "any clues")."""


def sentence_subject(sentence: str) -> str | None:
    """The words a sentence opens with before its verb ("Startup takes 300 ms." -> "startup"), what a
    pronoun in the next sentence points at."""
    words = sentence.split(" ")
    while words and words[0].lower() in ("the", "a", "an", "our", "my", "this"):
        words = words[1:]
    lowered = [word.lower().strip(".,;:!?()\"'`") for word in words]
    stop = next((i for i, word in enumerate(lowered) if not _phrase_word(word)), len(words))
    if not 0 < stop <= 3 or stop == len(words):
        return None
    return _lower(" ".join(word.strip(".,;:!?()\"'`") for word in words[:stop]))


def _specific(word: str) -> bool:
    """A word that names something of the turn (not a function word, an everyday word or a verb)."""
    lowered = word.lower().strip(".,;:!?()\"'`")
    return bool(lowered) and lowered not in _NOT_SPECIFIC


_OPTION = re.compile(r"\boption\s+([A-Za-z]\b|\d{1,2}\b)", re.IGNORECASE)
_CHOICE = re.compile(
    r"(?:^|\b(?:with|do|go|try|pick|take|use|start with|item|number|step))\s*#?(\d{1,2}|[A-H])\b(?![.\d])"
)
_ORDINAL = {"first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5", "last": "-1"}
_ORDINAL_CHOICE = re.compile(r"\bthe (first|second|third|fourth|fifth|last) (?:one|option|approach|idea)\b", re.I)
_ITEM = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?(?:[-*+][ \t]+)?(?:\*\*|__)?(?:(?P<noun>option|issue)[ \t]+)?(?:\*\*|__)?"
    r"(?P<key>[A-H]|\d{1,2})(?:\*\*|__)?[ \t]*(?:[.):]|[ \t]+[-—:])[ \t]*(?P<text>.+)$",
    re.IGNORECASE | re.MULTILINE,
)
"""An option or numbered item of an answer ("**Option B: Load it from a file**", "3. **Vector search** — …")."""
_ITEM_END = re.compile(r"\*\*|__|\s[-—–]\s|:\s|(?<=[a-z)`])\.(?:\s|$)|\?(?:\s|$)")
_PROPOSAL = re.compile(
    r"^(?:(?:so|then|ok(?:ay)?),?\s+)?(?:do you want me to|want me to|would you like me to|shall i|should i|"
    r"i can|i could|i'?d (?:suggest|recommend)(?: that we)?|i (?:suggest|recommend)(?: that we)?|"
    r"my recommendation is to|next,? i'?ll|now,? let me|let me now|now)\s+(?P<task>.+)$",
    re.IGNORECASE,
)
"""An answer's offer or next step ("Want me to draft an RFD for option 1?", "Now add the helpers:")."""
_POINTING = re.compile(r"\b(?:it|that|this|them|these|those|one|option|approach|proposal|plan|suggestion)\b", re.I)


def pointed_keys(request: str) -> list[str]:
    """The options or items a request picks ("go with option B" -> ["B"], "2 first, then 1" -> ["2", "1"])."""
    text = plain(request)
    found = [match.group(1).upper() for match in _OPTION.finditer(text)]
    found += [match.group(1).upper() for match in _CHOICE.finditer(text) if match.group(1).upper() not in found]
    if not found and re.fullmatch(r"\W*(\d{1,2}(?:\W+\d{1,2})*)\W*", text):
        found = re.findall(r"\d{1,2}", text)
    if found and found[0].isdigit():
        found += [number for number in re.findall(r"(?<![\d.])\d{1,2}(?![\d.])", text) if number not in found]
    found += [_ORDINAL[match.group(1).lower()] for match in _ORDINAL_CHOICE.finditer(text)]
    if is_follow_up(request) or len(text.split()) <= 12:
        return found
    return [key for key in found if _OPTION.search(text)]


def answer_items(answer: str, noun: str | None = None) -> dict[str, str]:
    """The options and numbered items of an answer by their key ("B", "3"), each as its title (with
    ``noun``: only the items it names, "Issue 5: …")."""
    items: dict[str, str] = {}
    ordered: list[str] = []
    text = plain(answer)
    for match in _ITEM.finditer(text):
        if noun is not None and (match.group("noun") or "").lower() != noun:
            continue
        key = match.group("key").upper()
        title = clean_line(_ITEM_END.split(match.group("text").strip().lstrip("*_ "), 1)[0]).strip(" .:,")
        if key not in items and title and any(char.isalpha() for char in title):
            items[key] = title
            ordered.append(key)
    if ordered:
        items["-1"] = items[ordered[-1]]
    return items


def proposal(answer: str) -> str | None:
    """What an answer offers to do next, as an imperative ("Want me to draft an RFD?" -> "Draft an RFD")."""
    for sentence in reversed(sentences(answer)[-6:]):
        match = _PROPOSAL.match(sentence)
        if match is None:
            continue
        wanted = re.split(r"\?|,? or (?:should|do|would|shall) ", match.group("task"), maxsplit=1)[0]
        wanted = task(wanted).rstrip(" .:!")
        first = wanted.split(" ", 1)[0].lower()
        if first in VERBS and len(wanted.split(" ")) >= 2:
            return imperative(wanted)
    return None


_ISSUE = re.compile(r"\bissues?\s+(\d{1,2})\b(?!\.\d)", re.IGNORECASE)
"""A request's pointer to an issue an earlier answer listed ("and issue 5, what can we do there?")."""


def picked_issue(facts: TurnFacts, newest_first: Iterable[TurnFacts]) -> str | None:
    """A request that takes up an issue an earlier answer listed ("#### Issue 5: Three separate calls …"), as
    addressing that issue ("Address three separate calls … (issue 5)"); ``newest_first``: the turns before it,
    the one just before first."""
    keys = list(dict.fromkeys(_ISSUE.findall(plain(facts.request))))
    if not keys:
        return None
    for earlier in newest_first:
        items = earlier.issues
        chosen = [key for key in keys if key in items]
        if chosen:
            title = items[chosen[0]]
            note = f"(issue{'s' if len(keys) > 1 else ''} {', '.join(keys)})"
            first = title.split(" ", 1)[0]
            phrase = imperative(title) if first.lower() in VERBS or base_form(first) else f"Address {_lower(title)}"
            head = shorten(phrase, MAX_CHARS - len(note) - 1).removesuffix("…").rstrip(" ,;:")
            return f"{head} {note}"
    return None


def resolved(facts: TurnFacts, before: TurnFacts | None, earlier: Sequence[TurnFacts] = ()) -> str | None:
    """A follow-up's label from what it points at: the option or numbered item of the previous answer it
    picks ("Move bad conversations to a trash folder (option B)"), an issue an earlier answer listed, or
    the previous answer's offer it accepts."""
    if before is None:
        return None
    issue = picked_issue(facts, chain((before,), reversed(earlier)))
    if issue is not None:
        return issue
    keys = pointed_keys(facts.request)
    if keys:
        items = answer_items(before.answer)
        chosen = [key for key in keys if key in items]
        if not chosen:
            return None
        title = items[chosen[0]]
        shown = [key for key in keys if key != "-1"]
        named = "option " if _OPTION.search(facts.request) or shown[0].isalpha() else "item "
        named = named.replace(" ", "s ") if len(shown) > 1 else named
        note = f"({named}{', '.join(shown)})" if shown else ""
        first = title.split(" ", 1)[0]
        phrase = (
            imperative(title) if first.lower() in VERBS or base_form(first) else f"{verb_of(facts)} {_lower(title)}"
        )
        head = shorten(phrase, MAX_CHARS - len(note) - 1).removesuffix("…").rstrip(" ,;:")
        return f"{head} {note}".strip()
    if not (is_follow_up(facts.request) or _short_pointing(facts.request)):
        return None
    offered = proposal(before.answer)
    if offered is not None and facts.planned and not offered.startswith(("Plan", "Draft")):
        first, _, rest = offered.partition(" ")
        return f"Plan {gerund(first)} {rest}"
    return offered


_RECOMMENDED = re.compile(
    r"\b(?:recommend(?:ation)?|right fit|best fit|i'?d go with|i'?d pick|i prefer|my pick)\b[^\n]*?"
    r"(?:\boption\s+(?P<named>[A-Za-z]\b|\d{1,2}\b)|\*\*(?P<bold>[A-H])\*\*)"
    r"|(?:\boption\s+(?P<first>[A-Za-z]\b|\d{1,2}\b))[^\n]{0,40}?\b(?:is|seems) (?:the )?(?:right|best)",
    re.IGNORECASE,
)
"""An answer's sentence that recommends one of its options ("I think **Option A** is the right fit")."""


def recommended(facts: TurnFacts) -> str | None:
    """A turn that changed nothing and whose answer weighs options and recommends one, as the proposal of
    that option ("Propose <the option's title>")."""
    if facts.edited:
        return None
    items = answer_items(facts.answer)
    for match in _RECOMMENDED.finditer(plain(facts.answer).replace("__", "**")):
        key = (match.group("named") or match.group("bold") or match.group("first") or "").upper()
        title = items.get(key)
        if title is not None and sum(1 for item in items if item != "-1") >= 2:
            first = title.split(" ", 1)[0]
            return imperative(title) if first.lower() in VERBS else f"Propose {_lower(title)}"
    return None


_WHAT_NEXT = re.compile(
    r"\b(?:next steps?|what(?:'s| is| comes)? next|left to do|what else|remaining (?:work|steps|tasks))\b", re.I
)
_CHECKED = re.compile(r"^[ \t]*[-*+][ \t]+\[([ xX])\]", re.MULTILINE)


def next_steps(facts: TurnFacts) -> str | None:
    """A question about what is left ("what is the next step?", "what else is there to do?") by its answer:
    a task list all ticked off confirms the tasks are done; numbered steps are outlined by their first two."""
    asked = sentences(facts.request)
    if facts.edited or not asked or len(asked) > 2 or not _WHAT_NEXT.search(asked[0]):
        return None
    ticks = _CHECKED.findall(plain(facts.answer))
    if len(ticks) >= 2 and all(tick.strip() for tick in ticks):
        return "Confirm all tasks are done"
    items = answer_items(facts.answer)
    titles = [title for key, title in items.items() if key != "-1"][:2]
    if len(titles) < 2:
        return None
    first, second = (_lower(title).split(" ") for title in titles)
    if len(first) > 1 and first[-1] == second[-1]:
        first = first[:-1]
    return f"Outline next steps: {' '.join(first)} and {' '.join(second)}"


def _short_pointing(request: str) -> bool:
    """A short request that points back ("agreed, please add it", "do that")."""
    words = re.findall(r"[\w']+", request)
    return len(words) <= 10 and _POINTING.search(request) is not None and "?" not in request


def _lower(title: str) -> str:
    first, _, rest = title.partition(" ")
    keep = first == "I" or not first.replace("-", "").isalpha() or (len(first) > 1 and not first[1:].islower())
    return (first if keep else first.lower()) + (f" {rest}" if rest else "")


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
    asking = found[0][: max(len(found[0]) - len(asked), 0)]
    if re.search(r"\b(?:can|could|would|will) (?:you|we)\b", asking, re.I) and asked.split(" ", 1)[0].lower() in VERBS:
        return imperative(asked.rstrip("?"))
    return as_request(asked) if len(asked.split(" ")) <= QUESTION_WORDS else None


def verb_of(facts: TurnFacts) -> str:
    """The verb for what a turn did: the answer's opening past tense ("Added" -> "Add"), else from its
    tool calls and its request."""
    for sentence in sentences(facts.answer)[:4]:
        verb = base_form(sentence.split(" ", 1)[0])
        if verb is not None:
            return verb
    if _reports_problem(facts.request):
        return "Fix" if facts.edited else "Investigate"
    if facts.edited:
        return "Update"
    if facts.tools:
        return "Run"
    if "?" in facts.request:
        return "Explain"
    return "Explain" if facts.answer.strip() else "Discuss"


def _reports_problem(request: str) -> bool:
    """A request that reports something wrong: in its prose, or by pasting an error."""
    if _ERROR_PASTE.search(request):
        return True
    return looks_like_problem(request) and not is_follow_up(request)


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


_AND_VERB = re.compile(rf"\b(and|then) ({'|'.join(sorted(VERBS))})\b")


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
    first, _, rest = previous.split(": ", 1)[0].split("; ", 1)[0].partition(" ")
    if first not in ("Approve", "Thank") and rest and first.isalpha():
        rest = _AND_VERB.sub(lambda match: f"{match.group(1)} {gerund(match.group(2))}", _lower(rest))
        return shorten(f"{verb} {gerund(first)} {rest}", MAX_CHARS)
    return f"{verb} the previous answer"


def label_of(
    facts: TurnFacts,
    spread: Mapping[str, int] | None = None,
    turns: int = 1,
    previous: tuple[str | None, TurnFacts | None] = (None, None),
    *,
    earlier: Sequence[TurnFacts] = (),
    plan: str | None = None,
) -> str | None:
    """The label of one turn, before it is made distinct from the others (``spread``: in how many of the
    conversation's ``turns`` each word appears; ``previous``: the label and facts of the turn before;
    ``earlier``: the turns before that; ``plan``: the one numbered document the conversation writes)."""
    before, before_facts = previous
    changed = before_facts is not None and bool(before_facts.edited)
    acknowledged = acknowledgement(facts, before, changed)
    if acknowledged is not None:
        return acknowledged
    asking = "" if is_follow_up(facts.request) else facts.request
    terms = key_terms(asking, facts.answer, facts.edited, spread or {}, turns)
    line = recorded(facts) or resolved(facts, before_facts, earlier) or staged(facts, plan)
    if line is None:
        line = instruction(facts.request) or recommended(facts)
        listed = None if line else next_steps(facts)
        if listed is not None:
            return finished(listed, facts, ())
        line = line or question(facts.request)
        line = line or (accomplished(facts) if is_follow_up(facts.request) else None)
    if line is not None:
        return finished(line, facts, terms)
    if terms:
        failed = f"; {facts.ended_failing} failed" if facts.ended_failing else ""
        return finished(described(facts, terms), facts, terms, len(failed)) + failed
    fallback = outcome(facts) if is_follow_up(facts.request) else None
    if fallback is None and not is_follow_up(facts.request):
        first = sentences(facts.request)[0]
        fallback = as_request(task(first)) if first.endswith("?") else imperative(task(first))
    return finished(imperative(fallback), facts, ()) if fallback else None


_STAGE = re.compile(r"\b(phase|step|layer|milestone)\s+(\d{1,2})\b(?!\.\d)", re.IGNORECASE)
_NEXT_STAGE = re.compile(r"\bnext (phase|step|layer|milestone)\b", re.IGNORECASE)
_CONTINUING = word_set("move proceed continue go start begin carry")
"""The verbs of a request that moves on through a plan ("move on to phase 2", "proceed with the next phase")."""


def staged(facts: TurnFacts, plan: str | None) -> str | None:
    """A turn that moves on to a phase of a plan and changed files, as implementing it: "Implement RFD 052
    phase 2" (``plan``: the conversation's numbered document; "the next phase" is numbered by the answer)."""
    if not facts.edited:
        return None
    given = instruction(facts.request)
    if given is not None and given.split(" ", 1)[0].lower() not in _CONTINUING:
        return None
    request = plain(facts.request)
    match = _STAGE.search(request)
    if match is not None:
        kind, number = match.group(1).lower(), match.group(2)
    else:
        following = _NEXT_STAGE.search(request)
        if following is None:
            return None
        kind = following.group(1).lower()
        numbered = re.search(rf"\b{kind}\s+(\d{{1,2}})\b", plain(facts.answer), re.IGNORECASE)
        if numbered is None:
            return None
        number = numbered.group(1)
    return f"Implement {f'{plan} ' if plan else ''}{kind} {number}"


_COMMIT_KINDS = {"feat": "feature", "docs": "docs", "test": "tests", "ci": "CI"}
_CONVENTIONAL = re.compile(r"^(\w+)(?:\(([\w./-]+)\))?!?:\s*(.+)$")


def recorded(facts: TurnFacts) -> str | None:
    """A turn that made a commit or drafted a document, by what it recorded: "Commit <subject>",
    "Draft RFD 031: <title>"."""
    if facts.committed:
        match = _CONVENTIONAL.match(clean_line(facts.committed))
        if match is None:
            return f"Commit {_lower(imperative(clean_line(facts.committed)))}"
        kind = _COMMIT_KINDS.get(match.group(1).lower(), match.group(1).lower())
        what = " ".join(part for part in (match.group(2), kind) if part)
        return f"Commit {what}: {_lower(imperative(match.group(3)))}"
    if facts.drafted:
        named = f"{facts.documents[0]}: " if facts.documents else ""
        return f"Draft {named}{sentence_case(facts.drafted.strip())}"
    return None


def described(facts: TurnFacts, terms: Sequence[str]) -> str:
    """A verb for what the turn did and what it acted on: the request's first sentence that names the
    turn's best term, or else that term alone."""
    verb = verb_of(facts)
    stated = state_change(facts.answer)
    if stated is not None:
        return stated
    done = accomplished(facts) if facts.edited else None
    if done is not None and any(term.lower() in done.lower() for term in terms[:4]):
        return done
    spans = [span for span in _SPAN.findall(" ".join(_paragraphs(facts.request)[:1])) if any(c.isalpha() for c in span)]
    best = [span.strip() for span in spans[:1]] + list(terms[:3])
    asked = sentences(facts.request)[:1]
    if asked and asked[0].endswith("?") and not facts.edited and not subject_phrase(asked[0], best):
        return as_request(task(asked[0]))
    for sentence in sentences(plain(facts.request))[:4]:
        wanted = task(sentence).rstrip("?.!:")
        phrase = subject_phrase(wanted, best)
        if phrase:
            trouble = _TROUBLE.search(plain(facts.request))
            if trouble and verb in ("Fix", "Investigate") and trouble.group(0).lower() not in phrase.lower():
                return f"{verb} {trouble.group(0).lower()} in {phrase}"
            other = [span.strip(" \"'") for span in spans]
            other = [span for span in other if span not in phrase and span in sentence and identifier_like(span)]
            if " " not in phrase and "." in phrase and other:
                return f"{verb} {other[0]} in {phrase}"
            return f"{verb} {phrase}"
    return f"{verb} {' and '.join(best[:2]) if best else terms[0]}"


_TROUBLE = re.compile(
    r"\b(?:deadlock|race|crash|panic|regression|memory leak|warnings?|"
    r"(?:compile |build |type )?errors?)\b",
    re.IGNORECASE,
)
"""What went wrong, as a noun a label can name ("Fix deadlock in …")."""
_SPAN = re.compile(r"`([^`\n]{2,40})`")
_NOW = re.compile(r"^`?([\w:.]+)`? (?:is|are) now (?:an? |the )?(.+)$")
_COMPLETE = re.compile(r"^(.{3,40}?) (?:is|are) (?:now )?(?:complete|completed|done|finished|implemented)\b", re.I)


def state_change(answer: str) -> str | None:
    """An answer that opens with the state the turn reached: "X is now a proper enum" -> "Make X a proper
    enum", "Phase 3 is complete" -> "Complete phase 3"."""
    for sentence in sentences(answer)[:3]:
        match = _NOW.match(sentence.rstrip("."))
        if match and len(match.group(2).split(" ")) <= 8:
            return f"Make {match.group(1)} {match.group(2)}"
        match = _COMPLETE.match(sentence)
        if match:
            return f"Complete {_lower(match.group(1))}"
    return None


def _paragraphs(text: str) -> list[str]:
    return [part for part in re.split(r"\n\s*\n", plain(text)) if part.strip()]


_PHRASE_STOP = word_set(
    "a an the this that these those my our your its their is are was were be been has have had do does did "
    "and or but if so because when while which who what where how why to of in on at by for with from as "
    "it i we you they he she me us them not no can could should would will may might must ran got went came "
    "took gave"
)
_NOT_SPECIFIC = STOP | GENERIC | COMMON | _PHRASE_STOP | VAGUE


def subject_phrase(sentence: str, best: Sequence[str]) -> str | None:
    """The words around the first of ``best`` that ``sentence`` names, up to the function words on either
    side ("The `rfd-summaries` justfile task needs some work" -> "rfd-summaries justfile task")."""
    words = sentence.split(" ")
    lowered = [word.lower().strip(".,;:!?()\"'`") for word in words]
    for term in best:
        parts = term.lower().split(" ")
        starts = [i for i in range(len(lowered)) if lowered[i : i + len(parts)] == parts]
        if not starts:
            continue
        if len(parts) > 1:
            words = [*words[: starts[0]], term, *words[starts[0] + len(parts) :]]
            lowered = [*lowered[: starts[0]], term.lower(), *lowered[starts[0] + len(parts) :]]
        at = starts[0]
        start = at
        while start > 0 and lowered[start - 1] and _phrase_word(lowered[start - 1]) and at - start < 2:
            start -= 1
        stop = at + 1
        while stop < len(words) and _phrase_word(lowered[stop]) and stop - at < 3 and not words[stop - 1].endswith(","):
            stop += 1
        phrase = " ".join(word.strip(".,;:!?\"'`()[]") for word in words[start:stop])
        if len(phrase.split(" ")) >= 1:
            return phrase
    return None


def _phrase_word(word: str) -> bool:
    return (
        bool(word)
        and word not in _PHRASE_STOP
        and word not in STOP
        and word not in GENERIC
        and base_form(word) is None
        and not (word.endswith("s") and word[:-1] in VERBS)
    )


def finished(line: str, facts: TurnFacts, terms: Sequence[str], room: int = 0) -> str:
    """``line`` as a label: words said twice said once, at most two identifiers, a document the turn
    changed named when it fits, at most ``MAX_CHARS`` characters."""
    limit = MAX_CHARS - room
    line = _TEST_NAME.sub(r"\1 test", without_repeats(imperative(line)))
    line = at_most_identifiers(line)
    if len(line) > INSTRUCTION_CHARS:
        return shorten(line, limit)
    if len(line) < INSTRUCTION_CHARS - 10 and not any(identifier_like(word) for word in line.split(" ")):
        line = with_terms(line, [term for term in terms if identifier_like(term)][:MAX_IDENTIFIERS], limit)
    document = next((name for name in facts.documents if name.lower() not in line.lower()), None)
    if document is not None and not facts.drafted and len(line) + len(document) + 4 <= limit:
        return f"{line} in {document}"
    return shorten(line, limit)


_TEST_NAME = re.compile(r"\btest_(\w+) tests?\b")
"""A test named by its function ("the test_load_partial test") reads once ("the load_partial test")."""


def at_most_identifiers(line: str) -> str:
    """``line`` without the identifiers past the second (and the commas or "and" that joined them)."""
    kept: list[str] = []
    seen = 0
    for word in line.split(" "):
        if identifier_like(word):
            seen += 1
            if seen > MAX_IDENTIFIERS:
                if kept and kept[-1].lower() in ("and", "or", "&"):
                    kept.pop()
                continue
        kept.append(word)
    return " ".join(kept).rstrip(" ,;:")


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
    older: list[TurnFacts] = []  # the turns before the previous one, shared rather than copied for each turn
    documents = {name for fact in facts.values() for name in fact.documents}
    plan = next(iter(documents)) if len(documents) == 1 else None
    for turn in turns:
        turn_id = turn.id()
        if turn_id is None:
            continue
        line = label_of(facts[turn_id], spread, len(facts), previous, earlier=older, plan=plan)
        if line is not None:
            if same_words(line) in used:
                line = _distinct(line, facts[turn_id], spread, len(facts), used)
            used.add(same_words(line))
            labels[turn_id] = line
        if previous[1] is not None:
            older.append(previous[1])
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

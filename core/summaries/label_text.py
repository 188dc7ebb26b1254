"""The text rules of the offline labeller: prose out of a message, its sentences, the asking taken off a
request, a past-tense statement made imperative, and a cut at a word."""

import re
from functools import lru_cache

from turnmark.core.text.summary_text import one_line


def word_set(text: str) -> frozenset[str]:
    """The words of ``text`` (a constant's source stays readable)."""
    return frozenset(text.split())


_CODE_BLOCK = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[^\n]*$|\Z)", re.MULTILINE | re.DOTALL)
_NOT_PROSE = re.compile(r"^[ \t]*(?:>|[|│╭╰├┌└]|(?:#[\w/-]+[ \t]*)+$).*$", re.MULTILINE)
"""Quoted lines (the assistant's words being answered), tables and tag lines (``#projects/app #task``)."""
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
"""A Markdown link: ``links_as_text`` replaces each by its text, as ``_LINK.sub(r"\1", text)`` would."""
_URL = re.compile(r"<?https?://\S+>?")
_TAG = re.compile(r"(?<![\w:])</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>")
"""An HTML tag (never shown in a label); a type's parameters (``Vec<String>``) follow a letter and stay."""


def links_as_text(text: str) -> str:
    """``_LINK.sub(r"\1", text)`` in one pass: the regex tries every ``[`` and scans to the next ``]`` from
    each, so a text of many ``[`` and no ``]`` took time growing with the square of its length (a hostile
    message of 280,000 characters took a minute). A match from a ``[`` can only end its text at the first
    ``]`` after it, so every ``[`` before that ``]`` meets the same fate.

    >>> links_as_text("See [the docs](https://x.y/z) and [a [b](c) or [x]y.")
    'See the docs and a [b or [x]y.'
    """
    pieces: list[str] = []
    copied = search = 0
    while (start := text.find("[", search)) >= 0 and (close := text.find("]", start + 1)) >= 0:
        if not text.startswith("(", close + 1):
            search = close + 1
            continue
        end = text.find(")", close + 2)
        if end < 0:
            break
        pieces += (text[copied:start], text[start + 1 : close])
        copied = search = end + 1
    pieces.append(text[copied:])
    return "".join(pieces)


@lru_cache(maxsize=1024)
def plain(text: str) -> str:
    """``text`` without what is not the writer's prose: code blocks, quoted lines, tables, tag lines, link
    targets."""
    text = _NOT_PROSE.sub("", _CODE_BLOCK.sub("\n", text))
    return _TAG.sub("", _URL.sub("", links_as_text(text)))


_MARKS = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|[-*+][ \t]+|\d+[.)][ \t]+)(?:\[[ xX]\][ \t]+)?")
_EMPHASIS = re.compile(r"`+|\*{1,3}|(?<![\w/])_{1,3}(?=\w)|(?<=\w)_{1,3}(?![\w/])")


def clean_line(line: str) -> str:
    """One line without markdown marks (heading, list mark, emphasis, backticks)."""
    return one_line(_EMPHASIS.sub("", _MARKS.sub("", line)))


_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(.+?)[ \t#]*$")


def heading(text: str) -> str | None:
    """The heading ``text`` opens with, when it opens with one."""
    first = next((line for line in plain(text).split("\n") if line.strip()), "")
    match = _HEADING.match(first)
    return clean_line(match.group(1)) if match else None


_SENTENCE_END = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<! vs\.)(?<=[.!?])\s+(?=[A-Z`\"'(\[@#])|\n\s*\n|(?<=[:?])\n")


@lru_cache(maxsize=1024)
def sentences(text: str) -> tuple[str, ...]:
    """The prose sentences of ``text``, each a clean line (a line that ends with ``:`` or ``?`` ends one)."""
    found = (
        one_line(" ".join(clean_line(line) for line in part.split("\n"))) for part in _SENTENCE_END.split(plain(text))
    )
    return tuple(sentence for sentence in found if any(char.isalnum() for char in sentence))


OPENER = re.compile(
    r"^(?:(?:hi|hey|hello|ok(?:ay)?|so|alright|and|but|now|also|then|actually|next|btw|by the way|"
    r"while (?:we'?re|were|we are|i'?m) at it)\b[\s,!.]*)*",
    re.IGNORECASE,
)
ASKING = re.compile(
    r"^(?:(?:(?:can|could|would|will) (?:you|we|i)|please|pls|let'?s|lets|go ahead and|help me|try to|"
    r"(?:i|we) (?:would like|'d like|want|need|wanted|have) (?:you )?to|i want you to|we should|you should|"
    r"is it possible to|maybe|also|now|just)\b[\s,]*)+",
    re.IGNORECASE,
)
"""How a request asks ("Could you please", "I want you to go ahead and", "Let's"): what follows is the task."""


def without_asking(sentence: str) -> tuple[str, bool]:
    """``sentence`` without its openers and asking words, and whether it asked ("Can we rename X?" ->
    ("rename X?", True))."""
    opened = OPENER.sub("", sentence).strip()
    task = ASKING.sub("", opened).strip()
    return (task, task != opened) if task else (sentence, False)


VERBS = word_set(
    "add adapt address adjust allow analyse analyze answer apply ask audit automate avoid build bump "
    "calculate call catch change check clarify clean clear close codify collect combine commit compare compile "
    "complete configure confirm connect consider continue convert copy correct create cut debug decide define "
    "delete deploy describe design detect disable display document draft drop edit enable "
    "ensure estimate evaluate explain explore expose extend extract figure find finish fix flatten format "
    "generate get give go guard handle help hide implement import improve include inline inspect install "
    "integrate introduce investigate keep limit list load log look make map mark measure merge migrate mock "
    "move name note open optimize optimise organize outline parse pass patch pick pin plan port prepare "
    "prevent print profile proceed propose prototype provide publish pull push put reduce refactor register "
    "reintroduce release reload remove rename reorder repair replace report reproduce require research reset "
    "resolve restore restructure resume retry return reuse revert review rewrite run save scaffold search "
    "see separate set setup share show simplify skip solve sort specify split stage start stop store "
    "streamline strip suggest summarize support switch sync take tell test tidy trace track translate trim "
    "try turn tweak undo unify update upgrade use validate verify walk wire wrap write read grep locate cap "
    "benchmark do tackle"
)
"""Verbs a task starts with ("Fix …", "Rename …"): a sentence that opens with one states a task."""
IRREGULAR = {"made": "make", "wrote": "write", "rewrote": "rewrite", "built": "build", "ran": "run", "kept": "keep"}


def base_form(word: str) -> str | None:
    """The imperative of a past-tense verb ("Added" -> "Add", "capped" -> "Cap", "staged" -> "Stage")."""
    lowered = word.lower().strip(".,:;")
    if lowered in IRREGULAR or lowered in ("set", "split", "put", "cut"):
        return IRREGULAR.get(lowered, lowered).capitalize()
    stem = lowered[:-2]
    candidates = (stem, stem + "e", stem[:-1], stem[:-1] + "y") if lowered.endswith("ed") else ()
    return next((verb.capitalize() for verb in candidates if len(verb) > 1 and verb in VERBS), None)


_AND_PAST = re.compile(r"\b(and|then) (\w+ed)\b")


def imperative(statement: str) -> str | None:
    """A statement that opens with a past tense as an imperative ("Added a test and capped it" -> "Add a test
    and cap it"); ``None`` when it does not open with one."""
    first, _, rest = statement.strip().rstrip(".!:;,").partition(" ")
    base = base_form(first)
    if base is None:
        return None
    rest = _AND_PAST.sub(
        lambda match: f"{match.group(1)} {(base_form(match.group(2)) or match.group(2)).lower()}", rest
    )
    return f"{base} {rest}".strip()


def capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def shorten(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut at a word with ``…``."""
    text = one_line(text).rstrip(" .,;:")
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = len(head) if text[len(head)] == " " else head.rfind(" ")
    return (head[:space] if space > 0 else head).rstrip(" ,;:-—(") + "…"

"""The quality gate every turn summary passes before it is written, whoever wrote it (issue 12).

A model's answer (or ``builtin/extractive``'s, which takes the same path) is
first salvaged to one clean line (``parse_summaries``); the gate then refuses
a summary that is not a label of the turn at all:

- the turn ID echoed back: the summary is, once punctuation around it is
  trimmed and case ignored, one of the conversation's turn IDs or the IDs
  the request named (also wrapped in ``turn`` / ``id`` words, as in
  ``<turn id="a1turn0">`` or ``Turn a1turn0``, or several IDs in a row);
- markup: a tag (``<think>``, ``</response>``, ``<br/>``, ``<!-- -->``) or an HTML
  entity (``&lt;``, ``&amp;``, ``&#39;``): the model wrote its answer's wrapping,
  or escaped text, into the label. Code is not markup: an opening tag right
  after a letter, digit or colon is a type's parameters (``Vec<String>``), and
  a tag or entity in a `` `code span` `` is left alone;
- cut off: the summary runs to the longest one stored (``HARD_LIMIT``, the
  schema's ``maxLength``) and ends inside a word, without the ``…`` turnmark
  puts where it cuts (a grammar-constrained server stops at the limit
  mid-word; a longer answer is cut at a word with ``…`` before the gate);
- a list of identifiers, not a phrase: more than two identifier-like tokens
  (``snake_case``, ``CamelCase``, ``a::b``, ``f()``, ``file.ext``, paths) making
  up more than half its words (``Update bug GiB Path::iter() next_back() RootDir``;
  ``readability.identifier_list``, the rule the offline summarizer keeps too);
- no letters (``:{``, ``12:30 …``);
- fewer than two words (``x``, ``6656mis``): a word is a run of characters
  between spaces with a letter or digit in it; in scripts written without
  spaces (Chinese, Japanese) each character counts as a word;
- fewer than 8 characters (``Fix bug``); a wide (East Asian) character
  counts as two, as it takes two columns;
- copied from the prompt: the summary's words are those of a sentence, list
  item, line or quoted example of the fixed text the model is sent (the
  instructions and the schema's description), or, from three words on,
  appear in one of them in the same order, side by side ("concise and
  factual", "describe what the turn actually did");
- the summary of another turn of the same answer (same words, case and
  punctuation aside): the first turn of the request (the oldest) keeps it,
  every later one is refused, since one label cannot tell two turns apart
  and the first is the likelier to be about the turn it names.

Each refusal is one line, ``refused: "<summary>" <why>``; the turn gets no
summary, counts as a failed answer for the failure memory, and the rest of
the answer is written. The user's own summaries (``turnmark summary set``) do not
pass here: what a user writes is theirs.
"""

import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from html.entities import html5

from turnmark.core.summaries.readability import identifier_list
from turnmark.core.text.summary_text import width

MIN_WORDS = 2
MIN_CHARS = 8
HARD_LIMIT = 72
"""The longest summary stored, in characters: the schema's ``maxLength``; a longer answer is cut at a word."""
MIN_COPIED_WORDS = 3
"""A summary this long (in words) is refused when it appears anywhere inside the prompt's text."""

_WORD = re.compile(r"\w+")
_EDGE_PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")
_ID_WRAPPING = frozenset({"turn", "id", "turn_id", "event_id"})
_SENTENCE_END = re.compile(r"(?<=[.;:!?])\s+|\n\s*-\s+|\n\s*\n")
_QUOTED = re.compile(r'"([^"\n]+)"')
_BRACKETED = re.compile(r"\(([^()\n]+)\)")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_TAG = re.compile(
    r"</[A-Za-z][\w:.-]*\s*>?"
    r"|(?<![^\W_]|:)<(?:[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>|!--|[!?][A-Za-z][^<>]*>)"
)
"""A closing tag (also cut before its ``>``), or an opening or empty tag, a comment or a declaration that
does not follow a letter, digit or colon (``Vec<String>`` and ``iter::<T>`` are a type's parameters)."""
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|([A-Za-z][A-Za-z0-9]{1,31}));")


def _words(text: str) -> tuple[str, ...]:
    """The words of ``text`` as compared: letters and digits, case folded, punctuation dropped."""
    return tuple(_WORD.findall(text.casefold()))


def _unspaced(char: str) -> bool:
    """A letter of a script written without spaces between words (CJK ideographs, kana)."""
    return char.isalpha() and unicodedata.east_asian_width(char) in ("W", "F")


def word_count(text: str) -> int:
    """Words as a reader counts them: space-separated runs holding a letter or digit; each CJK character one.

    >>> word_count("x"), word_count("6656mis"), word_count("Fix the build"), word_count("12:30 …")
    (1, 1, 3, 1)
    >>> word_count("修复构建错误")
    6
    """
    count = 0
    for token in text.split():
        unspaced = sum(1 for char in token if _unspaced(char))
        rest = any(char.isalnum() and not _unspaced(char) for char in token)
        count += unspaced + (1 if rest else 0)
    return count


@lru_cache(maxsize=8)
def prompt_phrases(prompt: str) -> frozenset[tuple[str, ...]]:
    """The word sequences of the prompt's sentences, list items, lines and quoted or bracketed examples.

    >>> phrases = prompt_phrases('Be concise and factual; no filler such as "The user asks".')
    >>> for phrase in sorted(phrases):
    ...     print(" ".join(phrase))
    be concise and factual
    be concise and factual no filler such as the user asks
    no filler such as the user asks
    the user asks
    """
    pieces: list[str] = [prompt, *prompt.splitlines(), *_SENTENCE_END.split(prompt)]
    pieces += [match.group(1) for pattern in (_QUOTED, _BRACKETED) for match in pattern.finditer(prompt)]
    return frozenset(words for words in map(_words, pieces) if words)


def _inside(words: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    """``words`` appear in ``phrase`` side by side and in order."""
    size = len(words)
    return any(phrase[start : start + size] == words for start in range(len(phrase) - size + 1))


def copied_from_prompt(summary: str, prompt: str) -> bool:
    """The summary is a sentence, line or example of the prompt, or (three words or more) a part of one.

    >>> from turnmark.core.summaries.request import INSTRUCTIONS
    >>> copied_from_prompt("Concise and factual.", INSTRUCTIONS), copied_from_prompt("yes, do option 2", INSTRUCTIONS)
    (True, True)
    >>> copied_from_prompt("Describe what the turn actually did", INSTRUCTIONS)
    True
    >>> copied_from_prompt("Fix the lock race in storage", INSTRUCTIONS)
    False
    """
    words = _words(summary)
    if not words:
        return False
    phrases = prompt_phrases(prompt)
    if words in phrases:
        return True
    return len(words) >= MIN_COPIED_WORDS and any(_inside(words, phrase) for phrase in phrases)


def markup(summary: str) -> str | None:
    """The first markup tag or HTML entity in ``summary`` outside a code span (`` `<col>` ``), or ``None``.

    >>> markup("A test fails: …</response>"), markup("Show the &lt;id&gt; field"), markup("<think>Okay")
    ('</response>', '&lt;', '<think>')
    >>> markup("Return Vec<String> from parse"), markup("Compare a < b and c > d"), markup("Fix AT&T; then R&D")
    (None, None, None)
    >>> markup("Style each `<col>` of the RFD table"), markup("Escape & as `&amp;` in the feed")
    (None, None)
    """
    prose = _CODE_SPAN.sub(lambda span: " " * len(span.group(0)), summary)
    tag = _TAG.search(prose)
    entity = next((found for found in _ENTITY.finditer(prose) if _is_entity(found)), None)
    first = min((found for found in (tag, entity) if found is not None), key=lambda found: found.start(), default=None)
    return first.group(0) if first is not None else None


def _is_entity(found: re.Match[str]) -> bool:
    """A numeric reference, or a name HTML defines (``&str;`` in Rust prose is not one)."""
    name = found.group(1)
    return name is None or f"{name};" in html5


def cut_off(summary: str) -> bool:
    """The summary fills the longest one stored and its last word runs into the end, with no ``…``.

    >>> from turnmark.core.text.summary_text import cut_at_word
    >>> answer = "Cap the retry backoff of the stream handler at two seconds and add a regression test"
    >>> answer[:HARD_LIMIT]
    'Cap the retry backoff of the stream handler at two seconds and add a reg'
    >>> cut_off(answer[:HARD_LIMIT]), cut_off(cut_at_word(answer, HARD_LIMIT)), cut_off("Cap the retry backoff")
    (True, False, False)
    """
    return len(summary) >= HARD_LIMIT and summary[-1].isalnum()


class FoldedIds(frozenset[str]):
    """Turn IDs case-folded once: a long conversation's IDs are checked against each of its summaries."""


def folded_ids(turn_ids: Iterable[str]) -> FoldedIds:
    """``turn_ids`` case-folded (as they are, when they already are)."""
    return turn_ids if isinstance(turn_ids, FoldedIds) else FoldedIds(turn_id.casefold() for turn_id in turn_ids)


def known_ids(request_ids: Iterable[str], conversation_ids: Iterable[str]) -> FoldedIds:
    """The IDs no summary may be: the request's and the conversation's, folded (the conversation's as given,
    unfolded again, when they hold the request's, as a catch-up's do).

    >>> sorted(known_ids(("A1turn0",), ("b2turn0",))), sorted(known_ids(("a1turn0",), folded_ids(("A1TURN0",))))
    (['a1turn0', 'b2turn0'], ['a1turn0'])
    """
    folded = folded_ids(conversation_ids)
    request = [turn_id.casefold() for turn_id in request_ids]
    return folded if all(turn_id in folded for turn_id in request) else FoldedIds(folded.union(request))


def _is_turn_id(summary: str, turn_ids: Collection[str]) -> bool:
    trimmed = _EDGE_PUNCTUATION.sub("", summary).casefold()
    if trimmed in turn_ids:
        return True
    words = [word for word in _words(summary) if word not in _ID_WRAPPING]
    return bool(words) and all(word in turn_ids for word in words)


def refusal(summary: str, turn_ids: Collection[str], prompt: str) -> str | None:
    """Why ``summary`` (already one clean line) is refused, or ``None`` when it may be stored.

    ``turn_ids``: the conversation's turn IDs and the request's; ``prompt``: the fixed text the
    model was sent. Only the first reason is given.

    >>> from turnmark.core.summaries.request import INSTRUCTIONS
    >>> ids = ("a1turn0", "b2turn0")
    >>> for text in (":{", "x", "6656mis", "A1TURN0.", "12:30 …", "Fix bug", "concise and factual", "Fix the build"):
    ...     print(refusal(text, ids, INSTRUCTIONS))
    refused: ":{" has no letters
    refused: "x" has fewer than two words
    refused: "6656mis" has fewer than two words
    refused: "A1TURN0." is a turn ID, not a summary
    refused: "12:30 …" has no letters
    refused: "Fix bug" has fewer than 8 characters
    refused: "concise and factual" is copied from the instructions
    None
    """
    folded = folded_ids(turn_ids)
    shown = f'"{summary}"'
    if _is_turn_id(summary, folded):
        return f"refused: {shown} is a turn ID, not a summary"
    found = markup(summary)
    if found is not None:
        kind = "an HTML entity" if found.startswith("&") else "markup"
        return f"refused: {shown} holds {kind} ({found})"
    if cut_off(summary):
        return f"refused: {shown} stops inside a word at the {HARD_LIMIT}-character limit (cut off)"
    if identifier_list(summary):
        return f"refused: {shown} is a list of identifiers, not a phrase"
    if not any(char.isalpha() for char in summary):
        return f"refused: {shown} has no letters"
    if word_count(summary) < MIN_WORDS:
        return f"refused: {shown} has fewer than two words"
    if width(summary) < MIN_CHARS:
        return f"refused: {shown} has fewer than {MIN_CHARS} characters"
    if copied_from_prompt(summary, prompt):
        return f"refused: {shown} is copied from the instructions"
    return None


@dataclass(frozen=True, slots=True)
class Gated:
    """The summaries that passed, and a one-line reason for each one refused."""

    accepted: dict[str, str]
    refused: dict[str, str]


def gate(summaries: Mapping[str, str], order: Iterable[str], turn_ids: Collection[str], prompt: str) -> Gated:
    """Check every summary of one answer; ``order`` is the request's turn order (the first keeps a repeat).

    >>> from turnmark.core.summaries.request import INSTRUCTIONS
    >>> answer = {"a1turn0": "Fix the lock race", "b2turn0": "fix the lock race.", "c3turn0": "c3turn0"}
    >>> gated = gate(answer, ("a1turn0", "b2turn0", "c3turn0"), ("a1turn0", "b2turn0", "c3turn0"), INSTRUCTIONS)
    >>> gated.accepted
    {'a1turn0': 'Fix the lock race'}
    >>> for turn_id, why in gated.refused.items():
    ...     print(turn_id, why)
    b2turn0 refused: "fix the lock race." repeats the summary of a1turn0 in the same answer
    c3turn0 refused: "c3turn0" is a turn ID, not a summary
    """
    accepted: dict[str, str] = {}
    refused: dict[str, str] = {}
    first_with: dict[tuple[str, ...], str] = {}
    turn_ids = folded_ids(turn_ids)
    for turn_id in order:
        if turn_id not in summaries:
            continue
        summary = summaries[turn_id]
        why = refusal(summary, turn_ids, prompt)
        if why is None:
            earlier = first_with.setdefault(_words(summary), turn_id)
            if earlier != turn_id:
                why = f'refused: "{summary}" repeats the summary of {earlier} in the same answer'
        if why is None:
            accepted[turn_id] = summary
        else:
            refused[turn_id] = why
    return Gated(accepted, refused)

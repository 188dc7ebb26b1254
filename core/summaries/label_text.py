"""From a request or an answer to a label in the style of a git commit subject.

Pure text functions used by the offline summarizer (``core/extractive.py``): clean markdown and
pasted material out of a message, find the sentence that carries what was asked or done, make it
imperative ("Added a test" -> "Add a test", "Can you fix X?" -> "Fix X"), and shorten it without
cutting a word.
"""

import re
from functools import lru_cache

from turnmark.core.text.summary_text import one_line


def word_set(text: str) -> frozenset[str]:
    """The words of ``text`` (a constant's source stays readable)."""
    return frozenset(text.split())


_CODE_BLOCK = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[^\n]*$|\Z)", re.MULTILINE | re.DOTALL)
_QUOTE_LINE = re.compile(r"^[ \t]*>.*$", re.MULTILINE)
_TABLE_LINE = re.compile(r"^[ \t]*[|│╭╰├┌└].*$", re.MULTILINE)
_HASHTAG_LINE = re.compile(r"^[ \t]*(?:#[\w/-]+[ \t]*)+$", re.MULTILINE)
_PULL = re.compile(r"https?://github\.com/[\w.-]+/[\w.-]+/(pull|issues)/(\d+)\S*")
_URL = re.compile(r"<?https?://\S+>?")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(.+?)[ \t#]*$")
_LIST_MARK = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")
_INLINE = re.compile(r"`+|\*{1,3}|(?<![\w/])_{1,3}(?=\w)|(?<=\w)_{1,3}(?![\w/])")
_RULE = re.compile(r"^[\s\-=_*~`#|.:]*$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[@#]|$)|(?<=[.!?])$|\n\s*\n|(?<=:)\n")
_PARENTHESES = re.compile(r"\s*\([^()]*\)")
_SPACE = re.compile(r"\s+")

GREETINGS = re.compile(
    r"^(?:hi|hey|hello|hiya|good (?:morning|afternoon|evening)|thanks?(?: you)?|thx|ok(?:ay)?|so|alright|"
    r"great|perfect|nice|cool)\b[\s,!.]*",
    re.IGNORECASE,
)
"""An opener that says nothing about the task (removed from the front of a sentence)."""

ASKING = re.compile(
    r"^(?:(?:and|but|so|now|ok(?:ay)?|also|then|please|pls|actually|first(?:ly)?|next),?\s+)*"
    r"(?:(?:can|could|would|will) (?:you|we|i)(?: please)?(?: (?:help me|go ahead and|try to|also))? |"
    r"(?:i|we) (?:would like|'d like|want|need|wanted|would love|'d love|have) (?:you )?to "
    r"(?:(?:go ahead and|try and|please) )?|"
    r"i want you to |please |pls |let'?s (?:(?:go ahead and|try to|also|now) )?|"
    r"go ahead and |help me |try to |we should (?:also )?|you should |i think we should |"
    r"it would be (?:nice|great|good) to |i'?m (?:trying|looking) to |is it possible to |"
    r"i (?:wonder|was wondering) (?:if|whether) (?:we|you) (?:can|could) )+",
    re.IGNORECASE,
)
"""How a request asks ("Could you please", "I want you to", "Let's"); what follows is the task."""

PROBLEM = re.compile(
    r"\b(?:error|errors|fails?|failing|failed|failure|broken|breaks?|bug|crash(?:es|ed)?|panic(?:s|ked)?|"
    r"warnings?|issue|problem|wrong|garbled|doesn'?t work|does not work|not working|"
    r"regression|missing|cannot|can'?t|unable|(?:ok(?:ay)?|good|close|fine|better|nice),? but|"
    r"(?:be|is|are) causing (?:this|it|that))\b",
    re.IGNORECASE,
)

FILLER = word_set(
    "the a an this that these those some just actually really currently basically quite very also still "
    "simply maybe perhaps probably somehow"
)
"""Words a commit subject leaves out when a label has to be shortened."""

PAST_TENSE = {
    "added": "Add",
    "adjusted": "Adjust",
    "applied": "Apply",
    "built": "Build",
    "changed": "Change",
    "cleaned": "Clean",
    "converted": "Convert",
    "corrected": "Correct",
    "created": "Create",
    "deleted": "Delete",
    "documented": "Document",
    "drafted": "Draft",
    "dropped": "Drop",
    "extracted": "Extract",
    "fixed": "Fix",
    "implemented": "Implement",
    "improved": "Improve",
    "introduced": "Introduce",
    "made": "Make",
    "merged": "Merge",
    "moved": "Move",
    "pinned": "Pin",
    "refactored": "Refactor",
    "removed": "Remove",
    "renamed": "Rename",
    "replaced": "Replace",
    "reverted": "Revert",
    "rewrote": "Rewrite",
    "set": "Set",
    "simplified": "Simplify",
    "split": "Split",
    "switched": "Switch",
    "traced": "Trace",
    "updated": "Update",
    "upgraded": "Upgrade",
    "wrote": "Write",
    "wired": "Wire",
}
"""Past-tense openers of an answer ("Added …") and their imperative ("Add …")."""

VERBS = word_set(
    "add adapt address adjust allow analyse analyze answer apply ask audit automate avoid build bump "
    "calculate call catch change check clarify clean clear close codify collect combine commit compare compile "
    "complete configure confirm connect consider continue convert copy correct create cut debug decide define "
    "delete deploy describe design detect disable discuss display document draft drop edit enable "
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
    "outline confirm commit stage profile benchmark do"
)
"""Verbs a task starts with ("Fix …", "Codify …"): a clause that opens with one is an instruction."""

QUESTION = re.compile(
    r"^(?:what|why|how|where|when|which|who|is|are|does|do|did|can|could|should|would|will|was|were|has|have)\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=1024)
def plain(text: str) -> str:
    """``text`` without the material that is not prose: code blocks, quoted lines (the assistant's words
    being answered), tables, tag lines, link targets (a GitHub pull request or issue stays as ``PR #N``).

    Kept for the last texts asked: labelling a turn reads its request and answer many times."""
    text = _CODE_BLOCK.sub("\n", text)
    text = _QUOTE_LINE.sub("", text)
    text = _TABLE_LINE.sub("", text)
    text = _HASHTAG_LINE.sub("", text)
    text = _PULL.sub(lambda match: f"{'PR' if match.group(1) == 'pull' else 'issue'} #{match.group(2)}", text)
    text = _LINK.sub(r"\1", text)
    return _URL.sub("", text)


def heading(text: str) -> str | None:
    """The first markdown heading of ``text`` (a request that opens with a title says what it is about)."""
    for line in text.split("\n"):
        if not line.strip():
            continue
        match = _HEADING.match(line)
        return clean_line(plain(match.group(1))) if match else None
    return None


def clean_line(line: str) -> str:
    """One line without markdown marks (headings, list marks, emphasis, backticks)."""
    if _RULE.match(line):
        return ""
    line = _HEADING.sub(r"\1", line)
    line = _LIST_MARK.sub("", line)
    return one_line(_INLINE.sub("", line))


def sentences(text: str) -> list[str]:
    """The prose sentences of ``text``, each on one clean line; a line that ends with ``:`` (a preamble
    to a list or a paste) stays a sentence of its own."""
    return list(_sentences(text))


@lru_cache(maxsize=1024)
def _sentences(text: str) -> tuple[str, ...]:
    found = []
    for paragraph in _SENTENCE.split(plain(text)):
        if not paragraph or not paragraph.strip():
            continue
        lines = [clean_line(line) for line in paragraph.split("\n")]
        joined = one_line(" ".join(line for line in lines if line))
        if joined:
            found.append(joined)
    return tuple(found)


_TAG = re.compile(r"^(?:\[[^\]\n]{1,20}\]\s*)+")
_ASIDE = re.compile(
    r"^(?:while (?:we'?re|were|we are|i'?m) at it|by the way|btw|one more thing|on another note|also)\s*,\s*",
    re.IGNORECASE,
)


def task(sentence: str) -> str:
    """The task a sentence asks for, without the asking ("Could you please fix X?" -> "fix X")."""
    sentence = _ASIDE.sub("", GREETINGS.sub("", _TAG.sub("", sentence)).strip())
    stripped = ASKING.sub("", sentence).strip()
    return stripped or sentence


def base_form(word: str) -> str | None:
    """The imperative of a past-tense verb ("Added" -> "Add", "capped" -> "Cap"), or ``None``."""
    lowered = word.lower().strip(".,:;")
    if lowered in PAST_TENSE:
        return PAST_TENSE[lowered]
    if not lowered.endswith("ed") or len(lowered) < 5:
        return None
    stem = lowered[:-2]
    for candidate in (stem, stem + "e", stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else "", stem[:-1] + "y"):
        if candidate in VERBS:
            return candidate.capitalize()
    return None


_AND_PAST = re.compile(r"(\b(?:and|then)\s+|,\s+)(\w+ed)\b")


def imperative(text: str) -> str:
    """``text`` as an imperative line: a past-tense opener becomes its base form, the first letter upper case,
    no trailing punctuation."""
    text = text.strip().rstrip(".!:;,")
    text = _AND_PAST.sub(lambda match: f"{match.group(1)}{(base_form(match.group(2)) or match.group(2)).lower()}", text)
    first, _, rest = text.partition(" ")
    base = base_form(first)
    if base is not None:
        text = f"{base} {rest}".strip()
    elif first.isalpha() and first.islower():
        text = first[:1].upper() + first[1:] + (f" {rest}" if rest else "")
    return text


_WH_DO = re.compile(r"^(what|how|why|where|when|which) (does|do|did) (\S+ .*)$", re.IGNORECASE)
_WH_TO = re.compile(r"^(how|where|when) (?:should|can|could|do|would) (?:i|we|you|one) (.+)$", re.IGNORECASE)
_WHAT_IS = re.compile(r"^what (?:is|are|was|were) (.+)$", re.IGNORECASE)
_WHICH = re.compile(
    r"^which (.+?) (?:should|shall|do|would|could|can) (?:i|we|you) (?:use|pick|choose|go with|take|adopt)\b(.*)$",
    re.IGNORECASE,
)
_ABOUT = re.compile(r"^(?:and|what about|how about|also) (.+)$", re.IGNORECASE)


def as_request(question: str) -> str:
    """A question as what it asks for: "What does X do?" -> "Explain what X does", "How should we X?" ->
    "Explain how to X", "Is X Y?" -> "Check whether X is Y", "And the locks?" -> "Explain the locks"."""
    body = question.rstrip("?").strip()
    match = _WHICH.match(body)
    if match:
        return f"Choose the {match.group(1)}{match.group(2)}".replace("the the ", "the ")
    match = _WH_TO.match(body)
    if match:
        return f"Explain {match.group(1).lower()} to {match.group(2)}"
    match = _WH_DO.match(body)
    if match:
        wh, auxiliary = match.group(1).lower(), match.group(2).lower()
        words = body.split(" ")[2:]
        at = next((i for i, word in enumerate(words) if i and word.lower() in VERBS), len(words) - 1)
        verb = words[at]
        if auxiliary == "does" and not verb.endswith("s"):
            verb += "es" if verb.endswith(("o", "sh", "ch", "x")) else "s"
        return " ".join(["Explain", wh, *words[:at], verb, *words[at + 1 :]])
    match = _WHAT_IS.match(body)
    if match:
        return f"Explain {match.group(1)}"
    match = _ABOUT.match(body)
    if match:
        return f"Explain {match.group(1)}"
    first = body.split(" ", 1)[0].lower()
    if first in ("what", "why", "how", "where", "when", "which", "who"):
        return f"Explain {body[:1].lower()}{body[1:]}"
    return f"Check whether {_yes_no_statement(body)}"


def _yes_no_statement(body: str) -> str:
    words = body.split(" ")
    if len(words) > 2 and words[0].lower() in ("is", "are", "was", "were", "can", "could", "should", "will"):
        return " ".join([words[1], words[0].lower(), *words[2:]])
    if words and words[0].lower() in ("does", "do", "did", "has", "have"):
        return " ".join(words[1:])
    return body


def shorten(text: str, limit: int) -> str:
    """At most ``limit`` characters: first without parentheses, then without filler words, then up to the
    last clause or word that fits (marked with ``…`` only when a clause had to be cut)."""
    text = _SPACE.sub(" ", text).strip()
    if len(text) <= limit:
        return text
    text = _PARENTHESES.sub("", text)
    if len(text) > limit:
        words = text.split(" ")
        text = " ".join([words[0], *(word for word in words[1:] if word.lower() not in FILLER)])
    if len(text) <= limit:
        return text
    clause = _clause_cut(text, limit)
    if clause is not None:
        return clause
    head = text[: limit - 1]
    space = head.rfind(" ")
    head = head[:space] if space > 0 else head
    return head.rstrip(" ,;:-—") + "…"


_CLAUSE_BREAK = re.compile(
    r",\s|;\s|\s[-—]\s|\s(?:but|because|so that|such that|which|so|since|where|when|while|as|and then|"
    r"then|in order to|without|instead of|to see|that)\s"
)


def _clause_cut(text: str, limit: int) -> str | None:
    """``text`` up to the last clause break that leaves a label of at least four words within ``limit``."""
    best = None
    for match in _CLAUSE_BREAK.finditer(text):
        head = text[: match.start()].rstrip(" ,;:-—")
        if len(head) > limit:
            break
        if len(head.split(" ")) >= 4:
            best = head
    return best


def looks_like_problem(text: str) -> bool:
    return PROBLEM.search(text) is not None


def gerund(verb: str) -> str:
    """The ``-ing`` form of an imperative verb ("Explain" -> "explaining", "Run" -> "running", "Write" ->
    "writing")."""
    word = verb.lower()
    if word in _DOUBLED:
        return word + word[-1] + "ing"
    if word.endswith("ie"):
        return word[:-2] + "ying"
    if word.endswith("e") and not word.endswith(("ee", "ye", "oe")):
        return word[:-1] + "ing"
    short = len(word) <= 4 and len(word) >= 3
    if short and word[-1] not in "aeiouwxy" and word[-2] in "aeiou" and word[-3] not in "aeiou":
        return word + word[-1] + "ing"
    return word + "ing"


_DOUBLED = word_set("commit submit admit omit permit refer prefer occur begin forget upset")
"""Verbs stressed on their last syllable that double their last letter ("commit" -> "committing")."""

_REPEATED = re.compile(r"\b(\w+)(\s+\1\b)+", re.IGNORECASE)


def without_repeats(text: str) -> str:
    """``text`` with a word written twice in a row said once ("Apply the The rule" -> "Apply the rule")."""
    return _REPEATED.sub(r"\1", text)


def sentence_case(title: str) -> str:
    """A Title Case heading as a phrase ("Durable Conversation Storage" -> "Durable conversation storage");
    a name in capitals or with inner capitals stays as written."""
    words = title.split(" ")
    if not all(word[:1].isupper() or not word[:1].isalpha() or (word.islower() and len(word) <= 4) for word in words):
        return title
    tail = [word.lower() if word[1:].islower() else word for word in words[1:]]
    return " ".join([words[0], *tail])

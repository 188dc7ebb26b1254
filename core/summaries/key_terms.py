"""Key terms: the words that say what one turn of a conversation is about.

The offline summarizer (``core/extractive.py``) labels a turn with them when its request carries no
instruction of its own. Candidates are names and identifiers (``load_config``, ``RFD 031``,
``Storage::persist``, ``package.json``) and other uncommon words of the request, the answer's opening
and the files the turn changed; everyday words never count. Each is weighed by where it appears and
by how few other turns of the conversation use it (what is specific to this turn wins).
"""

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from turnmark.core.summaries.label_text import PAST_TENSE, base_form, plain, sentences, word_set

STOP = word_set(
    "a an the and or but if of to in on at by for with from as is are was were be been being it its this that "
    "these those i you we they he she me my our your their there here what which who how why when where do does "
    "did done have has had can could should would will shall may might must not no so than then too very just "
    "also still now all any some more most other into about over after before up down out again let lets "
    "please yes ok okay"
)
"""Function words (never a term, and left out when words are counted)."""

_TERM = re.compile(
    r"\b(?:RFD|rfd|[Pp]hase|[Ii]ssue|PR|[Ss]tep|[Ll]ayer|[Pp]art)\s+#?\d+[a-z]?\b"
    r"|[A-Za-z_#@.-]*[A-Za-z0-9](?:(?:::|[_./-])[A-Za-z0-9]+)*(?:\(\))?"
)
GENERIC = word_set(
    "code thing things way want wants wanted need needs like think know make sure work works working use "
    "using used file files change changes changed new current currently right good bit lot one two first "
    "now see look let get got well much many here there etc e.g i.e able actually already always another "
    "anything because before being below better between both cannot case cases could didn doesn don done "
    "each either else enough even ever every example fact few find found give going gone great happen "
    "happens however idea instead isn it's i'm i've i'd keep kind last least less likely made makes making "
    "may maybe mean means might mine more most must never next nothing often only other others otherwise "
    "our out own part perhaps point possible pretty probably put quite rather really reason said same say "
    "says seems seem should since something sometimes somewhere soon still such sure take than thanks that's "
    "their them then these they thing this those though through thus together too tried try trying turn "
    "under until upon usually various via want was way ways well went what whatever when where whether "
    "which while who whole why will with within without won't would yet you your yours we're let's here's "
    "there's above all also am an and any are as at be been but by can did do does for from had has have "
    "he her his how i if in into is it its just me my no not of off on once or over she so some than the "
    "to up us very was we were"
)
"""Words that say nothing specific about a turn (never a key term)."""

COMMON = word_set(
    "about above across act add added adding after again against ago agree agreed ahead allow almost alone "
    "along already although among amount answer anyone anyway appear apply approach area around ask asked "
    "away back bad based basic basically become begin behind believe best big bring broken build call called "
    "came care carry cause certain chance check clear clearly close come comes coming common complete "
    "consider contain continue correct couldn course cover create created current day days decide deal "
    "define describe detail details different direct directly discussed early easy effect end ended entire "
    "especially everything exact exactly except expect expected explain extra fail fall far fast feel felt "
    "fine finally fit follow following form forward free full fully fun further gave general "
    "gets getting glad goes good got group guess half hand handle happy hard head hear held help helps "
    "helpful high hit passes passing per runs takes taking seems shows tries four five six seven eight nine "
    "ten hold hope huge important include included including information inside "
    "interesting "
    "issue issues item join keep kept kinds knew large later lead leave left level light line lines list "
    "little live long longer looked looking looks lose lost lot low main major manage matter maybe mentioned "
    "met mind minor minute missed mode moment move moved name near nearly necessary needed needs nice noted "
    "note number obvious ok okay old open order original output outside overall pass past people perfect "
    "person place plan please plus possibly proceed proper properly provide quick quickly ran rate reach "
    "ready real reason recent relevant remain remember reply report require required rest result "
    "results return returned rule sad save saw second seen sense sent set several "
    "shit short showed side sign simple simply single small someone sort sound sounds source space "
    "special specific stand start started state stay step stop story straight strong stuff suggest support "
    "supposed taken talk tell telling term tested text thank thanks thought three time times "
    "today told top total totally touch toward tried true truly turned type typical understand unless "
    "useful value values version view wait walk wanted watch welcome whole wide wish word "
    "words world worse worst worth written wrong yes yourself"
)
"""Everyday words: a key term is what a turn is about, so these never are one."""


_NOISE = re.compile(
    r"^(?:[0-9a-f]{1,3}|[A-Za-z]\d{1,2}|\d+-\D.*|\d{1,2}(?:-\d+)+|[A-Za-z]{1,2}\d?|[A-Za-z]{1,3}-[A-Za-z])$"
)
"""Fragments that are not terms: short hex, list numbering glued to a word, bare dates, one letter and a digit."""

WEIGHTS = {"request": 2.0, "answer": 1.0, "edited": 1.5, "identifier": 1.5, "name": 0.5}


def key_terms(request: str, answer: str, edited: Sequence[str], spread: Mapping[str, int], turns: int) -> list[str]:
    """The turn's most specific terms, best first: names and identifiers from the request, the answer's
    opening and the files it changed, weighed by how few other turns of the conversation use them."""
    request = plain(request)
    opening = " ".join(sentences(answer)[:6])
    scores: dict[str, float] = {}
    shown: dict[str, str] = {}
    changed = " ".join(edited)
    for source, weight in ((request, WEIGHTS["request"]), (opening, WEIGHTS["answer"]), (changed, WEIGHTS["edited"])):
        for match in _TERM.finditer(source):
            found = _candidate(match.group(0))
            if found is None:
                continue
            term, key, identifier = found
            bonus = WEIGHTS["identifier"] if identifier else 0.0
            bonus += WEIGHTS["name"] if term[:1].isupper() and match.start() > 0 and not identifier else 0.0
            rarity = 1.0 + (turns - spread.get(key, 0)) / max(turns, 1)
            scores[key] = scores.get(key, 0.0) + (weight + bonus) * rarity
            shown.setdefault(key, term)
    ranked = sorted(scores, key=lambda key: -scores[key])
    phrases = [(other, other.split(" ")) for other in ranked[:8] if " " in other]
    kinds: dict[str, int] = {}
    kept = []
    for key in ranked:
        kind = key.split(" ", 1)[0] if " " in key else None
        if kind is not None:
            kinds[kind] = kinds.get(kind, 0) + 1
            if kinds[kind] > 2:
                continue
        if any(key != other and key in words for other, words in phrases):
            continue
        kept.append(shown[key])
    return kept


_IGNORED = GENERIC | STOP | COMMON
_IDENTIFIER = re.compile(r"[_/:.()]|\d|[a-z][A-Z]")


@lru_cache(maxsize=4096)
def _candidate(matched: str) -> tuple[str, str, bool] | None:
    """A matched word as a term (as shown, its key, whether it is an identifier), or ``None`` when it cannot
    be one; kept for the words seen last, which a conversation repeats."""
    term = matched.strip(".-#@_")
    if "/" in term and "." in term.rsplit("/", 1)[-1]:
        term = term.rsplit("/", 1)[-1]
    key = term.lower()
    if len(key) < 2 or key in _IGNORED or _NOISE.match(term):
        return None
    if " " not in key and (key in PAST_TENSE or base_form(key) is not None):
        return None
    return term, key, bool(_IDENTIFIER.search(term)) or " " in term


def word_spread(texts: Iterable[Sequence[str]]) -> Counter[str]:
    """In how many turns each word appears (``texts``: each turn's words)."""
    return Counter(word for words in texts for word in set(words) if word not in STOP)

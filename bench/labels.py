"""How well the offline summarizer labels turns: word-overlap F1 against hand-written reference labels.

The references (``bench/reference_labels.json``) were written by reading every turn of the corpus
(``../shared/corpus`` or ``$TURNMARK_CORPUS``) and of the fixtures, as a careful user would label
them. Each turn is scored twice against its reference (F1 of the lowercased words, a small stop-word
list removed): the label ``builtin/extractive`` writes, and the fallback, the first line of the request
(what ``turns`` shows without a summary). The references are split into a development half and a
held-out half (whole conversations, fixed before the rules were written: the file's ``split``); rules
are judged on the development half, the held-out half says whether they hold on turns they never saw.
The unseen turns (workspace ``unseen``: 8 real conversations of dcdpr/jp not in the corpus, made by
``bench/unseen_conversations.py``, found through ``$TURNMARK_UNSEEN``) are held-out only, reported alone and
with the corpus's held-out half; without them the table says how to make them.
Printed in one table: both halves, real corpus turns and fixture turns apart, the fallback beside the
labeller, and the share of labels worse than the fallback by more than 0.3. Then the readability count
(labels naming three or more identifier-like tokens, ``readability.py``), duplicate labels within a
conversation, labels cut inside a word and, with ``-v``, every development label beside its reference
(held-out labels are never printed). Targets: on the held-out real turns, the labeller beats the
fallback by >= 0.08 and at most 1 label in 10 is worse than the fallback by more than 0.3.
Run: ``just bench`` or ``python bench/labels.py [-v] [--bounds] [--stored]`` (``--bounds``: the best a single
sentence of the turn could score, chosen knowing the reference; an upper bound for picking sentences, not a
target; ``--stored``: score the summaries the turns already carry instead, e.g. a model's, written by ``turnmark
summarize --all`` into copies named by ``TURNMARK_CORPUS`` and ``TURNMARK_UNSEEN``; a turn without one scores 0).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import corpus_root
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.payloads import ChatRequest, ChatResponse
from turnmark.core.stream.turns import Turn
from turnmark.core.summaries.catchup import extractive_answer
from turnmark.core.summaries.label_text import word_set
from turnmark.core.summaries.labels import ensure_first_turn_start, unlabel_turn
from turnmark.core.summaries.readability import MAX_IDENTIFIERS, identifiers
from turnmark.shell.storage.conversations import read_conversation
from turnmark.shell.storage.workspace import find_workspace, list_conversations

REPO = Path(__file__).resolve().parents[1]
REFERENCES = REPO / "bench" / "reference_labels.json"
STOP_WORDS = word_set(
    "a an the and or but of to in on at by for with from as is are be it its this that these those into "
    "about over up out via vs"
)
REAL = "corpus"
UNSEEN = "unseen"
"""The workspaces of real turns: the corpus, and the conversations of ``bench/unseen_conversations.py``; every
other one holds fixture turns."""
READABLE_SHARE = 0.10
"""At most this share of labels may name more than ``MAX_IDENTIFIERS`` identifiers."""
WORD = re.compile(r"[a-z0-9][a-z0-9_.#/-]*[a-z0-9]|[a-z0-9]")


def words(text: str) -> list[str]:
    return [word for word in WORD.findall(text.lower()) if word not in STOP_WORDS]


def f1(label: str, reference: str) -> float:
    """Word-overlap F1 of ``label`` against ``reference`` (multiset overlap of lowercased content words)."""
    ours, theirs = Counter(words(label)), Counter(words(reference))
    common = sum((ours & theirs).values())
    if not common:
        return 0.0
    precision, recall = common / sum(ours.values()), common / sum(theirs.values())
    return 2 * precision * recall / (precision + recall)


def cut_inside_a_word(label: str, source_words: set[str]) -> bool:
    """True when the label ends in ``…`` right after a fragment that is not a whole word of the turn."""
    if not label.endswith("…"):
        return False
    last = label[:-1].rstrip().rsplit(" ", 1)[-1].lower().strip(".,;:()`'\"")
    return bool(last) and last not in source_words


def workspace_root(name: str) -> Path | None:
    if name == REAL:
        return corpus_root()
    if name == UNSEEN:
        root = Path(os.environ.get("TURNMARK_UNSEEN", "/nonexistent"))
        return root if (root / ".jp" / "conversations").is_dir() else None
    return REPO / name


KINDS = {REAL: "corpus", UNSEEN: "unseen"}
SKIPPED = {
    REAL: "the corpus is not available (set TURNMARK_CORPUS)",
    UNSEEN: "set TURNMARK_UNSEEN to the folder bench/unseen_conversations.py makes from a clone of dcdpr/jp",
}


def labels_of(root: Path, stored: bool = False) -> dict[str, tuple[dict[str, str], dict[str, str], set[str]]]:
    """Every conversation's labels (the offline summarizer's, or with ``stored`` the summaries its turns carry) and
    fallbacks by turn ID (the fallbacks in the turns' order), with the words of its requests and answers."""
    workspace = find_workspace(root)
    assert workspace is not None, root
    found = {}
    for ref in list_conversations(workspace):
        stream = ensure_first_turn_start(read_conversation(ref, sequential_ids()).stream)
        turn_ids = tuple(str(turn.id()) for turn in stream.turns() if turn.id() is not None)
        unlabelled = stream
        for turn in stream.turns():
            if turn.summary() is not None and turn.id() is not None:
                unlabelled = unlabel_turn(unlabelled, str(turn.id())).value_or(unlabelled)
        answer = (
            {str(turn.id()): turn.summary() or "" for turn in stream.turns()}
            if stored
            else json.loads(extractive_answer(unlabelled, turn_ids))["summaries"]
        )
        fallbacks = {str(turn.id()): turn.fallback_summary() or "" for turn in unlabelled.turns()}
        text = json.dumps(stream.to_json().decode("utf-8", "replace")).lower()
        found[ref.display_id] = (answer, fallbacks, set(re.findall(r"[\w.-]+", text)))
    return found


WORSE_BY = 0.3
"""A label is worse than the fallback when its F1 is lower by more than this."""
WORSE_SHARE = 0.10
REAL_KINDS = ("corpus", "unseen")
TABLE = (
    ("corpus development", ("corpus",), "development"),
    ("corpus held-out", ("corpus",), "held-out"),
    ("unseen conversations", ("unseen",), "held-out"),
    ("all held-out real turns", REAL_KINDS, "held-out"),
    ("fixture development", ("fixture",), "development"),
    ("fixture held-out", ("fixture",), "held-out"),
    ("fixture both halves", ("fixture",), None),
)
"""The table's rows: a title, the kinds of turns, the half (``None``: both)."""
GAIN_TARGET = 0.08


@dataclass(frozen=True)
class Row:
    """One scored turn."""

    kind: str
    half: str
    conversation: str
    index: int
    label: str
    reference: str
    score: float
    fallback: float


@dataclass
class Scores:
    """The benchmark's figures: each scored turn, duplicate labels, cuts inside a word, missing labels."""

    rows: list[Row] = field(default_factory=list)
    duplicates: int = 0
    cuts: int = 0
    missing: int = 0
    skipped: list[str] = field(default_factory=list)

    def of(self, kinds: tuple[str, ...] | None = None, half: str | None = None) -> list[Row]:
        """The rows of turns of these kinds (``corpus``, ``unseen``, ``fixture``; all when ``None``), of one half or
        both."""
        return [row for row in self.rows if (kinds is None or row.kind in kinds) and half in (None, row.half)]

    def heavy(self, kinds: tuple[str, ...] | None) -> int:
        """Labels naming more than ``MAX_IDENTIFIERS`` identifier-like tokens."""
        return sum(len(identifiers(row.label)) > MAX_IDENTIFIERS for row in self.of(kinds))


def mean_of(rows: list[Row], fallback: bool = False) -> float:
    return mean([row.fallback if fallback else row.score for row in rows])


def worse_share(rows: list[Row]) -> float:
    """The share of ``rows`` whose label is worse than the fallback by more than ``WORSE_BY``."""
    return sum(row.fallback - row.score > WORSE_BY for row in rows) / len(rows) if rows else 0.0


def score(references: list[dict[str, Any]], stored: bool = False) -> Scores:
    """Label every referenced turn with the offline summarizer and score it, and its fallback, against its reference."""
    scores = Scores()
    cache: dict[str, dict[str, tuple[dict[str, str], dict[str, str], set[str]]]] = {}
    for conversation in references:
        name = conversation["workspace"]
        root = workspace_root(name)
        if root is None:
            scores.skipped += [] if name in scores.skipped else [name]
            continue
        if name not in cache:
            cache[name] = labels_of(root, stored)
        produced, fallbacks, source_words = cache[name].get(conversation["id"], ({}, {}, set()))
        order = list(fallbacks)
        made = []
        for turn in conversation["turns"]:
            turn_id = turn["turn"] or (order[turn["index"]] if turn["index"] < len(order) else "")
            label = produced.get(turn_id, "")
            scores.missing += 0 if label else 1
            made.append(label.lower())
            scores.cuts += cut_inside_a_word(label, source_words)
            fallback = f1(fallbacks.get(turn_id, ""), turn["label"])
            scores.rows.append(
                Row(KINDS.get(name, "fixture"), turn["half"], conversation["id"], turn["index"], label, turn["label"],
                    f1(label, turn["label"]), fallback)
            )  # fmt: skip
        scores.duplicates += sum(count - 1 for label, count in Counter(made).items() if label and count > 1)
    return scores


def main() -> None:
    if not REFERENCES.is_file():
        sys.exit(f"no reference labels at {REFERENCES}")
    stored = "--stored" in sys.argv[1:]
    scores = score(json.loads(REFERENCES.read_text(encoding="utf-8"))["conversations"], stored)
    for name in scores.skipped:
        print(f"skipping the {name} turns: {SKIPPED.get(name, 'no such workspace')}")
    if "-v" in sys.argv[1:]:
        for row in scores.of(half="development"):
            print(f"{row.score:4.2f} {row.fallback:4.2f}  {row.conversation} {row.index:>2}  {row.label!r}")
            print(f"           ref {row.reference!r}")
    if not scores.rows:
        sys.exit("no turns scored")
    column = "stored" if stored else "extractive"
    print(f"{'turns':<28} {'n':>3}  {'fallback':>8}  {column:>10}  {'gain':>6}  worse by > {WORSE_BY}")
    for title, kinds, half in TABLE:
        rows = scores.of(kinds, half)
        if rows:
            labeller, fallback = mean_of(rows), mean_of(rows, fallback=True)
            print(
                f"{title:<28} {len(rows):>3}  {fallback:>8.3f}  {labeller:>10.3f}"
                f"  {labeller - fallback:>+6.3f}  {worse_share(rows):>5.0%}"
            )
    if scores.of(REAL_KINDS, "held-out"):
        print(
            f"targets on all held-out real turns: gain >= {GAIN_TARGET:.2f},"
            f" worse by > {WORSE_BY} on at most {WORSE_SHARE:.0%}"
        )
    for title, kinds in (("real", REAL_KINDS), ("fixture", ("fixture",))):
        if scores.of(kinds):
            print(
                f"{title} labels with {MAX_IDENTIFIERS + 1}+ identifier-like tokens: {scores.heavy(kinds)}"
                f" of {len(scores.of(kinds))} (target <= 1 in {round(1 / READABLE_SHARE)})"
            )
    print(f"duplicate labels within a conversation: {scores.duplicates} (target 0)")
    print(f"labels cut inside a word: {scores.cuts} (target 0)")
    print(f"turns without a label: {scores.missing}")
    if "--bounds" in sys.argv[1:]:
        sentence_bounds(json.loads(REFERENCES.read_text(encoding="utf-8"))["conversations"])


SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
BOUND_WORDS = 10
"""The words of a sentence a bound keeps (a label's length)."""


def sentence_bounds(references: list[dict[str, Any]]) -> None:
    """How far picking one sentence can go: for each real turn, the best F1 of any sentence of its requests, of
    its answers, and of either (each cut to ``BOUND_WORDS`` words), chosen knowing the reference, beside the
    fallback's, by set. An extractive labeller picks without the reference, so it stays under these; not a
    target, an upper bound."""
    best: dict[str, list[tuple[float, float, float, float]]] = {}
    for name, kind in KINDS.items():
        root = workspace_root(name)
        workspace = find_workspace(root) if root is not None else None
        if workspace is None:
            continue
        conversations = list_conversations(workspace)
        streams = {ref.display_id: read_conversation(ref, sequential_ids()).stream for ref in conversations}
        for conversation in (each for each in references if each["workspace"] == name):
            turns = list(ensure_first_turn_start(streams[conversation["id"]]).turns())
            for reference in conversation["turns"]:
                title = f"{kind} {reference['half']}"
                best.setdefault(title, []).append(sentence_scores(turns[reference["index"]], reference["label"]))
    print(f"best single sentence ({BOUND_WORDS} words): {'fallback':>8} {'request':>8} {'answer':>8} {'either':>8}")
    for title, rows in best.items():
        figures = " ".join(f"{mean([row[i] for row in rows]):>8.3f}" for i in range(4))
        print(f"  {title:<20} {len(rows):>3} turns {figures}")


def sentence_scores(turn: Turn, label: str) -> tuple[float, float, float, float]:
    """The fallback's F1, and the best of a request sentence, of an answer sentence and of either."""
    asked, answered = [], []
    for entry in turn.events():
        payload = entry.payload
        if isinstance(payload, ChatRequest):
            asked += SENTENCE.split(payload.content)
        elif isinstance(payload, ChatResponse) and payload.variant == "message":
            answered += SENTENCE.split(str(payload.value))

    def top(sentences: list[str]) -> float:
        return max((f1(" ".join(text.split()[:BOUND_WORDS]), label) for text in sentences), default=0.0)

    return f1(turn.fallback_summary() or "", label), top(asked), top(answered), top(asked + answered)


def mean(scores: list[float]) -> float:
    return sum(scores) / len(scores) if scores else 0.0


if __name__ == "__main__":
    main()

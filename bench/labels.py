"""How well the offline summarizer labels turns: word-overlap F1 against hand-written reference labels.

The references (``bench/reference_labels.json``) were written by reading every turn of the corpus
(``../shared/corpus`` or ``$TURNMARK_CORPUS``) and of the fixtures, as a careful user would label
them. Each turn is scored twice against its reference (F1 of the lowercased words, a small stop-word
list removed): the label ``builtin/extractive`` writes, and the fallback, the first line of the request
(what ``turns`` shows without a summary). The references are split into a development half and a
held-out half (whole conversations, fixed before the rules were written: the file's ``split``); rules
are judged on the development half, the held-out half says whether they hold on turns they never saw.
Printed in one table: both halves, real corpus turns and fixture turns apart, the fallback beside the
labeller, and the share of labels worse than the fallback by more than 0.3. Then the readability count
(labels naming three or more identifier-like tokens, ``readability.py``), duplicate labels within a
conversation, labels cut inside a word and, with ``-v``, every development label beside its reference
(held-out labels are never printed). Targets: on the held-out real turns, the labeller beats the
fallback by >= 0.08 and at most 1 label in 10 is worse than the fallback by more than 0.3.
Run: ``just bench`` or ``python bench/labels.py [-v] [--bounds]`` (``--bounds``: the best a single sentence of the turn
could score, chosen knowing the reference; an upper bound for picking sentences, not a target).
"""

from __future__ import annotations

import json
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
"""The workspace of the real turns; every other one holds fixture turns."""
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
    if name == "corpus":
        return corpus_root()
    return REPO / name


def labels_of(root: Path) -> dict[str, tuple[dict[str, str], dict[str, str], set[str]]]:
    """Every conversation's labels and fallbacks by turn ID, with the words of its requests and answers."""
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
        answer = json.loads(extractive_answer(unlabelled, turn_ids))["summaries"]
        fallbacks = {str(turn.id()): turn.fallback_summary() or "" for turn in unlabelled.turns()}
        text = json.dumps(stream.to_json().decode("utf-8", "replace")).lower()
        found[ref.display_id] = (answer, fallbacks, set(re.findall(r"[\w.-]+", text)))
    return found


HALVES = ("development", "held-out")
WORSE_BY = 0.3
"""A label is worse than the fallback when its F1 is lower by more than this."""
WORSE_SHARE = 0.10
GAIN_TARGET = 0.08


@dataclass(frozen=True)
class Row:
    """One scored turn."""

    real: bool
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

    def of(self, real: bool | None = None, half: str | None = None) -> list[Row]:
        """The rows of real turns (``True``), fixture turns (``False``) or both, of one half or both."""
        return [row for row in self.rows if real in (None, row.real) and half in (None, row.half)]

    def heavy(self, real: bool | None = None) -> int:
        """Labels naming more than ``MAX_IDENTIFIERS`` identifier-like tokens."""
        return sum(len(identifiers(row.label)) > MAX_IDENTIFIERS for row in self.of(real))


def mean_of(rows: list[Row], fallback: bool = False) -> float:
    return mean([row.fallback if fallback else row.score for row in rows])


def worse_share(rows: list[Row]) -> float:
    """The share of ``rows`` whose label is worse than the fallback by more than ``WORSE_BY``."""
    return sum(row.fallback - row.score > WORSE_BY for row in rows) / len(rows) if rows else 0.0


def score(references: list[dict[str, Any]]) -> Scores:
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
            cache[name] = labels_of(root)
        produced, fallbacks, source_words = cache[name].get(conversation["id"], ({}, {}, set()))
        made = []
        for turn in conversation["turns"]:
            label = produced.get(turn["turn"], "")
            scores.missing += 0 if label else 1
            made.append(label.lower())
            scores.cuts += cut_inside_a_word(label, source_words)
            fallback = f1(fallbacks.get(turn["turn"], ""), turn["label"])
            scores.rows.append(
                Row(name == REAL, turn["half"], conversation["id"], turn["index"], label, turn["label"],
                    f1(label, turn["label"]), fallback)
            )  # fmt: skip
        scores.duplicates += sum(count - 1 for label, count in Counter(made).items() if label and count > 1)
    return scores


def main() -> None:
    if not REFERENCES.is_file():
        sys.exit(f"no reference labels at {REFERENCES}")
    scores = score(json.loads(REFERENCES.read_text(encoding="utf-8"))["conversations"])
    for name in scores.skipped:
        print(f"skipping {name}: the corpus is not available (set TURNMARK_CORPUS)")
    if "-v" in sys.argv[1:]:
        for row in scores.of(half="development"):
            print(f"{row.score:4.2f} {row.fallback:4.2f}  {row.conversation} {row.index:>2}  {row.label!r}")
            print(f"           ref {row.reference!r}")
    if not scores.rows:
        sys.exit("no turns scored")
    print(f"{'turns':<26} {'n':>3}  {'fallback':>8}  {'extractive':>10}  {'gain':>6}  worse by > {WORSE_BY}")
    for real, kind in ((True, "real"), (False, "fixture")):
        for half in (*HALVES, None):
            rows = scores.of(real, half)
            if rows:
                labeller, fallback = mean_of(rows), mean_of(rows, fallback=True)
                print(
                    f"{kind + ' ' + (half or 'both halves'):<26} {len(rows):>3}  {fallback:>8.3f}  {labeller:>10.3f}"
                    f"  {labeller - fallback:>+6.3f}  {worse_share(rows):>5.0%}"
                )
    held = scores.of(True, "held-out")
    if held:
        print(
            f"targets on the held-out real turns: gain >= {GAIN_TARGET:.2f},"
            f" worse by > {WORSE_BY} on at most {WORSE_SHARE:.0%}"
        )
    for title, real in (("real", True), ("fixture", False)):
        if scores.of(real):
            print(
                f"{title} labels with {MAX_IDENTIFIERS + 1}+ identifier-like tokens: {scores.heavy(real)}"
                f" of {len(scores.of(real))} (target <= 1 in {round(1 / READABLE_SHARE)})"
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
    its answers, and of either (each cut to ``BOUND_WORDS`` words), chosen knowing the reference, by half. An
    extractive labeller picks without the reference, so it stays under these; not a target, an upper bound."""
    root = corpus_root()
    workspace = find_workspace(root) if root is not None else None
    if workspace is None:
        print("skipping the bounds: the corpus is not available (set TURNMARK_CORPUS)")
        return
    streams = {ref.display_id: read_conversation(ref, sequential_ids()).stream for ref in list_conversations(workspace)}
    best: dict[str, list[tuple[float, float, float]]] = {half: [] for half in HALVES}
    for conversation in references:
        if conversation["workspace"] != REAL:
            continue
        turns = {str(turn.id()): turn for turn in ensure_first_turn_start(streams[conversation["id"]]).turns()}
        for reference in conversation["turns"]:
            asked, answered = [], []
            for entry in turns[reference["turn"]].events():
                payload = entry.payload
                if isinstance(payload, ChatRequest):
                    asked += SENTENCE.split(payload.content)
                elif isinstance(payload, ChatResponse) and payload.variant == "message":
                    answered += SENTENCE.split(str(payload.value))

            def top(sentences: list[str], label: str = reference["label"]) -> float:
                return max((f1(" ".join(text.split()[:BOUND_WORDS]), label) for text in sentences), default=0.0)

            best[reference["half"]].append((top(asked), top(answered), top(asked + answered)))
    print(f"best single sentence ({BOUND_WORDS} words), real turns: {'request':>8} {'answer':>8} {'either':>8}")
    for half, rows in best.items():
        figures = " ".join(f"{mean([row[i] for row in rows]):>8.3f}" for i in range(3))
        print(f"  {half:<10} {len(rows):>3} turns {figures}")


def mean(scores: list[float]) -> float:
    return sum(scores) / len(scores) if scores else 0.0


if __name__ == "__main__":
    main()

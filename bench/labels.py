"""How well the offline summarizer labels turns: word-overlap F1 against hand-written reference labels.

The references (``bench/reference_labels.json``) were written by reading every turn of the corpus
(``../shared/corpus`` or ``$TURNMARK_CORPUS``) and of the fixtures, as a careful user would label
them. For each turn the label ``builtin/extractive`` writes is scored against its reference: F1 of
the lowercased words, a small stop-word list removed. Printed: the mean F1 of the real corpus
turns (the target: what users see) and of the fixture turns, separately, per workspace and overall;
the readability count (labels naming three or more identifier-like tokens, ``readability.py``);
duplicate labels within a conversation, labels cut inside a word, and, with ``-v``, every label
beside its reference. Targets: mean F1 >= 0.40 on the real turns, at most 1 label in 10 with three
identifiers or more, no duplicates, no cuts inside a word. Judge a change by the real-turn figure.
Run: ``just bench`` or ``python bench/labels.py [-v]``.
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
REAL_TARGET = 0.40
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


def labels_of(root: Path) -> dict[str, tuple[dict[str, str], set[str]]]:
    """Every conversation's labels by turn ID, with the words of its requests and answers."""
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
        text = json.dumps(stream.to_json().decode("utf-8", "replace")).lower()
        found[ref.display_id] = (answer, set(re.findall(r"[\w.-]+", text)))
    return found


@dataclass
class Scores:
    """The benchmark's figures: F1 per turn by workspace, duplicate labels, cuts inside a word, missing labels."""

    by_workspace: dict[str, list[float]] = field(default_factory=dict)
    duplicates: int = 0
    cuts: int = 0
    identifier_heavy: dict[str, int] = field(default_factory=dict)
    """By workspace: labels naming more than ``MAX_IDENTIFIERS`` identifier-like tokens."""
    missing: int = 0
    skipped: list[str] = field(default_factory=list)
    rows: list[tuple[float, str, int, str, str]] = field(default_factory=list)
    """Each turn: its F1, conversation, index, label and reference."""

    def every(self) -> list[float]:
        return [score for group in self.by_workspace.values() for score in group]

    def real(self) -> list[float]:
        return self.by_workspace.get(REAL, [])

    def fixtures(self) -> list[float]:
        return [score for name, group in self.by_workspace.items() if name != REAL for score in group]

    def heavy(self, real: bool | None = None) -> int:
        """Labels with too many identifiers: of the real turns (``True``), the fixtures (``False``) or all."""
        return sum(count for name, count in self.identifier_heavy.items() if real is None or (name == REAL) == real)


def score(references: list[dict[str, Any]]) -> Scores:
    """Label every referenced turn with the offline summarizer and score it against its reference."""
    scores = Scores()
    cache: dict[str, dict[str, tuple[dict[str, str], set[str]]]] = {}
    for conversation in references:
        name = conversation["workspace"]
        root = workspace_root(name)
        if root is None:
            scores.skipped += [] if name in scores.skipped else [name]
            continue
        if name not in cache:
            cache[name] = labels_of(root)
        produced, source_words = cache[name].get(conversation["id"], ({}, set()))
        made = []
        for turn in conversation["turns"]:
            label = produced.get(turn["turn"], "")
            scores.missing += 0 if label else 1
            made.append(label.lower())
            value = f1(label, turn["label"])
            scores.by_workspace.setdefault(name, []).append(value)
            scores.cuts += cut_inside_a_word(label, source_words)
            heavy = len(identifiers(label)) > MAX_IDENTIFIERS
            scores.identifier_heavy[name] = scores.identifier_heavy.get(name, 0) + heavy
            scores.rows.append((value, conversation["id"], turn["index"], label, turn["label"]))
        scores.duplicates += sum(count - 1 for label, count in Counter(made).items() if label and count > 1)
    return scores


def main() -> None:
    if not REFERENCES.is_file():
        sys.exit(f"no reference labels at {REFERENCES}")
    scores = score(json.loads(REFERENCES.read_text(encoding="utf-8"))["conversations"])
    for name in scores.skipped:
        print(f"skipping {name}: the corpus is not available (set TURNMARK_CORPUS)")
    if "-v" in sys.argv[1:]:
        for value, conversation, index, label, reference in scores.rows:
            print(f"{value:4.2f}  {conversation} {index:>2}  {label!r}\n      ref {reference!r}")
    every = scores.every()
    if not every:
        sys.exit("no turns scored")
    for name, group in scores.by_workspace.items():
        print(f"{name:<28} {len(group):>3} turns  mean F1 {mean(group):.2f}")
    real, fixtures = scores.real(), scores.fixtures()
    if real:
        print(
            f"{'real corpus turns':<28} {len(real):>3} turns  mean F1 {mean(real):.2f}  (target >= {REAL_TARGET:.2f})"
        )
    print(f"{'fixture turns':<28} {len(fixtures):>3} turns  mean F1 {mean(fixtures):.2f}")
    print(f"{'all':<28} {len(every):>3} turns  mean F1 {mean(every):.2f}")
    for title, group, heavy in (("real", real, scores.heavy(True)), ("fixture", fixtures, scores.heavy(False))):
        if group:
            print(
                f"{title} labels with {MAX_IDENTIFIERS + 1}+ identifier-like tokens: {heavy} of {len(group)}"
                f" (target <= 1 in {round(1 / READABLE_SHARE)})"
            )
    print(f"duplicate labels within a conversation: {scores.duplicates} (target 0)")
    print(f"labels cut inside a word: {scores.cuts} (target 0)")
    print(f"turns without a label: {scores.missing}")


def mean(scores: list[float]) -> float:
    return sum(scores) / len(scores) if scores else 0.0


if __name__ == "__main__":
    main()

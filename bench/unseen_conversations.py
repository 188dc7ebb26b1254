"""Make the workspace of the unseen turns ``bench/labels.py`` scores: real conversations of dcdpr/jp that are
not in the corpus, so the labeller's rules were never written against them.

Their references are in ``bench/reference_labels.json`` (workspace ``unseen``), written by reading the turns
before anyone ran the labeller on them. The conversations themselves are not copied into this repository (they
are the JP project's, as the corpus is); this script takes them out of a clone of it:

    git clone https://github.com/dcdpr/jp /tmp/jp
    python bench/unseen_conversations.py /tmp/jp /tmp/unseen
    TURNMARK_UNSEEN=/tmp/unseen python bench/labels.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CONVERSATIONS = {
    "17648402467-flexible-llm-provider-architecture-design": "4c1c39f1343e0ffc830a4d8f4e25b7fccc6c32a4",
    "17659773217-google-api-streaming-event-conversion-issue": "4c1c39f1343e0ffc830a4d8f4e25b7fccc6c32a4",
    "17671120783-investigating-segfault-in-iter-mut-change-tracking": "4c1c39f1343e0ffc830a4d8f4e25b7fccc6c32a4",
    "17673969718-iana-reference-site": "4c1c39f1343e0ffc830a4d8f4e25b7fccc6c32a4",
    "17728322628-bear-mcp-server-design-review": "4c1c39f1343e0ffc830a4d8f4e25b7fccc6c32a4",
    "17738348630-workspace-sanitization-strategy": "4c1c39f1343e0ffc830a4d8f4e25b7fccc6c32a4",
    "17760760747-replace-prefill-logic-for-anthropic-models": "4c1c39f1343e0ffc830a4d8f4e25b7fccc6c32a4",
    "17782748370-editor-invocation-with-shell-false-and-arguments": "9ce1b14ac56d733efc0211563a69aacdfa839234",
}
"""Each conversation folder and the dcdpr/jp commit its files are taken from (the last one that holds it)."""


def git(clone: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(clone), *args], check=True, capture_output=True).stdout


def extract(clone: Path, destination: Path) -> None:
    """Write each conversation's files, as of its commit, under ``destination/.jp/conversations``."""
    for folder, commit in CONVERSATIONS.items():
        listed = git(clone, "ls-tree", "-r", "--name-only", commit, "--", ".jp/conversations/").decode().split()
        files = [path for path in listed if path.split("/")[-2] == folder]
        if not files:
            sys.exit(f"{clone}: commit {commit[:12]} holds no .jp/conversations/…/{folder}")
        target = destination / ".jp" / "conversations" / folder
        target.mkdir(parents=True, exist_ok=True)
        for path in files:
            (target / path.rsplit("/", 1)[-1]).write_bytes(git(clone, "show", f"{commit}:{path}"))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python bench/unseen_conversations.py JP_CLONE DESTINATION")
    extract(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"{len(CONVERSATIONS)} conversations in {sys.argv[2]}/.jp/conversations")

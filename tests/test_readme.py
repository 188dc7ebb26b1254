"""The README's examples and the docs pages', run: every ``$ turnmark …`` block prints what the page shows.

A fenced block whose lines start with ``$ turnmark`` holds one or more commands, each
followed by its output up to the next ``$ `` line or the end of the block. A shown line
that is only ``...`` stands for one or more lines left out. The tour's intro has the
reader copy ``fixtures`` to ``/tmp/tour`` and every example names its workspace there;
here each block runs on a fresh copy in ``tmp_path``, as a real process, with no JP or
provider variables and HOME and the XDG folders inside ``tmp_path`` (so no user
configuration is read). stdout and stderr are compared together, in the order a terminal
shows them. The only normalization: the copy's path reads ``/tmp/tour`` again, and
timestamps and durations (none are shown today) read as placeholders.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.agreement.workspaces import copy_corpus

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCUMENTS = (README, *sorted((REPO / "docs").glob("*.md")))
"""The pages whose examples are run: the README first, then every page under docs/."""
FIXTURES = REPO / "fixtures"
TOUR = "/tmp/tour"
"""Where the tour's intro copies ``fixtures``; every example's ``--workspace`` lies inside it."""
COPY_COMMAND = f"cp -r fixtures {TOUR}"
TURNMARK = Path(sys.executable).parent / "turnmark"

NOT_RUN: dict[tuple[str, ...], str] = {
    ("repair", "-i"): "asks its questions on a terminal",
    ("query",): "needs a model that answers",
    ("watch",): "runs until stopped (`watch --once` is run)",
}
"""Commands a block may show that are not run here (the block is skipped, saying why).

None of them is in the README today. `edit -i` is run: EDITOR is ``EDITOR_SCRIPT``, which
makes the edit the README describes.
"""

EDITOR_SCRIPT = '''\
"""The README's `edit -i` example: delete the `# Turn 1` block from the plan and save."""
import pathlib
import sys

plan = pathlib.Path(sys.argv[-1])
kept, dropping = [], False
for line in plan.read_text(encoding="utf-8").splitlines(keepends=True):
    if line.startswith("# Turn "):
        dropping = line.startswith("# Turn 1 ")
    if not dropping:
        kept.append(line)
plan.write_text("".join(kept).rstrip("\\n") + "\\n", encoding="utf-8")
'''

PROVIDER_VARIABLES = ("OPENAI_BASE_URL", "OLLAMA_HOST", "VISUAL", "EDITOR")


@dataclass(frozen=True)
class Command:
    line: int
    """The page's line of the ``$ turnmark`` line (from 1), ``where`` names both."""
    argv: tuple[str, ...]
    """The words after ``$``, ``turnmark`` first."""
    shown: tuple[str, ...]


@dataclass(frozen=True)
class Block:
    line: int
    commands: tuple[Command, ...]
    document: Path = README

    @property
    def page(self) -> str:
        return str(self.document.relative_to(REPO))

    @property
    def name(self) -> str:
        shown = " + ".join(" ".join(shown_arguments(command.argv)) for command in self.commands)
        return shown if self.document == README else f"{self.page}: {shown}"


def shown_arguments(argv: tuple[str, ...]) -> list[str]:
    """The command without ``turnmark`` and its ``--workspace PATH``: what names it in a test ID."""
    words: list[str] = []
    skip = False
    for word in argv[1:]:
        if skip:
            skip = False
        elif word in ("--workspace", "-w"):
            skip = True
        elif not word.startswith("--workspace="):
            words.append(word)
    return words


def fenced_blocks(text: str) -> list[tuple[int, list[str]]]:
    """Each fenced block's first content line (from 1) and its lines."""
    blocks: list[tuple[int, list[str]]] = []
    current: list[str] | None = None
    start = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("```"):
            if current is None:
                current, start = [], number + 1
            else:
                blocks.append((start, current))
                current = None
        elif current is not None:
            current.append(line)
    assert current is None, "README.md has a fenced block that is never closed"
    return blocks


def readme_blocks(document: Path = README) -> list[Block]:
    found: list[Block] = []
    page = document.relative_to(REPO)
    for start, lines in fenced_blocks(document.read_text(encoding="utf-8")):
        if not any(line.startswith("$ turnmark") for line in lines):
            continue
        assert lines[0].startswith("$ "), f"{page} line {start}: output before the first `$ turnmark` line"
        commands: list[Command] = []
        for offset, line in enumerate(lines):
            if line.startswith("$ "):
                assert line.startswith("$ turnmark "), (
                    f"{page} line {start + offset}: only `$ turnmark` commands can be run here: {line}"
                )
                commands.append(Command(start + offset, tuple(shlex.split(line[2:])), ()))
            else:
                last = commands[-1]
                commands[-1] = Command(last.line, last.argv, (*last.shown, line))
        found.append(Block(start, tuple(commands), document))
    return found


BLOCKS = [block for document in DOCUMENTS for block in readme_blocks(document)]


def not_run_reason(block: Block) -> str | None:
    for command in block.commands:
        words = shown_arguments(command.argv)
        for prefix, reason in NOT_RUN.items():
            if words[: len(prefix)] == list(prefix) and not (prefix == ("watch",) and "--once" in words):
                return f"`turnmark {' '.join(words)}` ({block.page} line {command.line}) is not run: {reason}"
    return None


def block_params() -> list[object]:
    params: list[object] = []
    for block in BLOCKS:
        reason = not_run_reason(block)
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        params.append(pytest.param(block, marks=marks, id=block.name))
    return params


# Output normalization: only what differs from run to run.
TIMESTAMP = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?")
DURATION = re.compile(r"\b\d+(?:\.\d+)?(?:ms|s)\b")


STATE_FOLDER = re.compile(r"(/turnmark/[\w.-]+?)-[0-9a-f]{16}\b")


def normalized(text: str, copy: Path) -> str:
    """The copy as ``TOUR``, the run's home as ``~``, a workspace's folder digest under turnmark's cache or state
    folder as ``<digest>``, times and durations as placeholders."""
    text = text.replace(str(copy), TOUR).replace(str(copy.parent / "home"), "~")
    text = STATE_FOLDER.sub(r"\1-<digest>", text)
    text = TIMESTAMP.sub("<time>", text)
    return DURATION.sub("<duration>", text)


def is_gap(line: str) -> bool:
    return line.strip() == "..."


def matches(shown: tuple[str, ...], printed: tuple[str, ...]) -> bool:
    """Line for line, where a ``...`` line stands for one or more printed lines."""

    @functools.cache
    def rest(i: int, j: int) -> bool:
        if i == len(shown):
            return j == len(printed)
        if is_gap(shown[i]):
            return any(rest(i + 1, k) for k in range(j + 1, len(printed) + 1))
        return j < len(printed) and shown[i] == printed[j] and rest(i + 1, j + 1)

    return rest(0, 0)


def gaps_filled(shown: tuple[str, ...], printed: tuple[str, ...]) -> list[str]:
    """The shown lines with each ``...`` replaced by the printed lines it most likely stands for (for the diff)."""
    filled: list[str] = []
    j = 0
    for i, line in enumerate(shown):
        if not is_gap(line):
            filled.append(line)
            j += 1
            continue
        # The gap ends where the first shown line after it that was printed unchanged is found
        # (less the shown lines before that one); with no shown line after it, at the end.
        end = len(printed)
        following: list[str] = []
        for later in shown[i + 1 :]:
            if is_gap(later):
                break
            following.append(later)
        if following:
            end = next(
                (
                    k - before
                    for before, later in enumerate(following)
                    for k in range(j + 1 + before, len(printed))
                    if printed[k] == later
                ),
                j,
            )
        if end > j:
            filled.extend(printed[j:end])
            j = end
        else:
            filled.append(line)
    return filled


def isolated_environment(home: Path, editor: Path) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("JP_", "XDG_", "TURNMARK_"))
        and not name.endswith(("_API_KEY", "_TOKEN"))
        and name not in PROVIDER_VARIABLES
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        EDITOR=f"{shlex.quote(sys.executable)} {shlex.quote(str(editor))}",
        PYTHONUNBUFFERED="1",  # stdout and stderr interleave as on a terminal
        PYTHONIOENCODING="utf-8",
    )
    return env


def on_the_copy(argv: tuple[str, ...], copy: Path) -> list[str]:
    return [str(TURNMARK), *(str(copy) + word[len(TOUR) :] if word.startswith(TOUR) else word for word in argv[1:])]


def run_block(block: Block, tmp_path: Path, copy: Path) -> list[str]:
    """Run the block's commands in order on ``copy``; one failure message per command that printed otherwise."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    editor = tmp_path / "editor.py"
    editor.write_text(EDITOR_SCRIPT, encoding="utf-8")
    env = isolated_environment(home, editor)
    failures: list[str] = []
    for command in block.commands:
        done = subprocess.run(
            on_the_copy(command.argv, copy),
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            encoding="utf-8",
            timeout=120,
            check=False,
        )
        printed = tuple(normalized(done.stdout, copy).splitlines())
        shown = tuple(normalized("\n".join(command.shown), copy).splitlines())
        if matches(shown, printed):
            continue
        diff = difflib.unified_diff(
            gaps_filled(shown, printed), list(printed), f"shown in {block.page}", "printed", lineterm="", n=2
        )
        failures.append(
            f"{block.page} line {command.line}: `$ {shlex.join(command.argv)}` (exit status {done.returncode}) "
            f"printed something else ('...' in {block.page} stands for one or more lines):\n" + "\n".join(diff)
        )
    return failures


def fresh_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "tour"
    shutil.copytree(FIXTURES, copy)
    return copy


def test_the_readme_and_the_commands_page_have_examples_to_run() -> None:
    readme = [block for block in BLOCKS if block.document == README]
    assert len(readme) >= 4
    assert sum(len(block.commands) for block in readme) >= 6
    assert len(BLOCKS) >= 15


@pytest.mark.parametrize("document", sorted({block.document for block in BLOCKS}), ids=lambda path: path.name)
def test_the_tour_says_how_to_make_the_copy_the_examples_use(document: Path) -> None:
    assert f"\n{COPY_COMMAND}\n" in document.read_text(encoding="utf-8")


def test_the_readme_is_a_first_screen_with_the_reference_one_click_away() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    commands = [body for _, body in fenced_blocks(text)][:2]
    assert commands == [
        ["python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/turnmark demo"],
        ["python3 -m venv .venv && .venv/bin/pip install -q -e '.[dev]' && .venv/bin/just test"],
    ], "the two set-up commands come first (.ci/run runs the second)"
    for page in re.findall(r"\]\((docs/[\w.-]+\.md)\)", text):
        assert (REPO / page).is_file(), page
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)\)", text))
    assert {f"docs/{path.name}" for path in (REPO / "docs").glob("*.md")} <= linked, "every page is linked"


@pytest.mark.parametrize("block", BLOCKS, ids=[block.name for block in BLOCKS])
def test_every_example_runs_on_the_copy_never_in_the_checkout(block: Block) -> None:
    for command in block.commands:
        argv = list(command.argv)
        workspaces = [argv[i + 1] for i, word in enumerate(argv[:-1]) if word in ("--workspace", "-w")]
        where = (
            f"{block.page} line {command.line}: `{shlex.join(argv)}` must name its workspace with "
            f"--workspace {TOUR}/…, the copy the tour's intro makes"
        )
        assert workspaces, where
        assert all(path.startswith(f"{TOUR}/") for path in workspaces), where


@pytest.mark.parametrize("block", block_params())
def test_the_example_prints_what_the_readme_shows(block: Block, tmp_path: Path) -> None:
    failures = run_block(block, tmp_path, fresh_copy(tmp_path))
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)


@pytest.mark.parametrize("document", sorted({block.document for block in BLOCKS}), ids=lambda path: path.name)
def test_the_whole_tour_in_order_on_one_copy(document: Path, tmp_path: Path) -> None:
    """A reader makes one copy per page and runs its examples one after another: each prints what is shown."""
    copy = fresh_copy(tmp_path)
    failures = [
        failure
        for block in BLOCKS
        if block.document == document and not not_run_reason(block)
        for failure in run_block(block, tmp_path, copy)
    ]
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)


def test_a_gap_stands_for_one_or_more_lines() -> None:
    assert matches(("a", "  ...", "d"), ("a", "b", "c", "d"))
    assert matches(("a", "  ...", "d"), ("a", "b", "d"))
    assert not matches(("a", "  ...", "d"), ("a", "d"))
    assert not matches(("a", "  ...", "d"), ("a", "b", "e"))
    assert matches(("a", "..."), ("a", "b"))
    assert not matches(("a",), ("a", "b"))
    assert gaps_filled(("a", "  ...", "d", "x"), ("a", "b", "c", "d", "e")) == ["a", "b", "c", "d", "x"]
    # The line after the gap drifted: the gap is placed by the next line that did not.
    assert gaps_filled(("a", "  ...", "D", "e"), ("a", "b", "c", "d", "e")) == ["a", "b", "c", "D", "e"]


def test_a_block_with_a_command_that_cannot_run_here_is_skipped_saying_why() -> None:
    block = Block(1, (Command(2, ("turnmark", "--workspace", f"{TOUR}/workspace", "repair", "-i"), ()),))
    assert (
        not_run_reason(block) == "`turnmark repair -i` (README.md line 2) is not run: asks its questions on a terminal"
    )
    once = Block(1, (Command(2, ("turnmark", "watch", "--once", "--workspace", f"{TOUR}/workspace"), ()),))
    assert not_run_reason(once) is None


def test_the_corpus_plan_quoted_on_the_commands_page_is_the_one_edit_i_writes(tmp_path: Path) -> None:
    quoted = next(
        tuple(lines)
        for _, lines in fenced_blocks((REPO / "docs" / "commands.md").read_text(encoding="utf-8"))
        if lines and lines[0].startswith("# Turn 0 (")
    )
    root = copy_corpus(tmp_path / "corpus")
    editor = tmp_path / "keep_plan.py"
    kept = tmp_path / "plan.txt"
    editor.write_text(f"import shutil, sys\nshutil.copyfile(sys.argv[1], {str(kept)!r})\n")
    env = isolated_environment(tmp_path / "home", editor)
    command = [str(TURNMARK), "--workspace", str(root), "edit", "-i", "17738399468"]
    subprocess.run(command, env=env, capture_output=True, timeout=120, check=True)
    planned = tuple(kept.read_text(encoding="utf-8").split("\n# Turn 1 ")[0].splitlines())
    plan = planned[next(i for i, line in enumerate(planned) if line.startswith("# Turn 0 (")) :]
    assert matches(quoted, plan), "\n".join(difflib.unified_diff(quoted, plan[: len(quoted) + 5], lineterm=""))

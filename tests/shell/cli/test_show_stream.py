"""``show`` writes as it renders (issue 40): the streamed text equals the whole one, chunks reach stdout before the
next turn is made, a reader that stops (``| head``) stops the rendering, quietly."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from returns.result import Failure

from tests.conftest import REPO, corpus_params
from turnmark.core.rendering.shown import ShowOptions, TurnSelection, json_chunks
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli import pager
from turnmark.shell.usecases import showing

TURNMARK = str(Path(sys.executable).parent / "turnmark")
FIXTURE_FOLDERS = sorted(
    folder
    for name in ("workspace", "legacy-workspace", "repair-workspace", "show-workspace")
    for folder in (REPO / "fixtures" / name / ".jp" / "conversations").iterdir()
    if folder.is_dir()
)


def _stream(folder: Path) -> ConversationStream:
    base = folder / "base_config.json"
    events = (folder / "events.json").read_bytes()
    loaded = ConversationStream.from_json(
        events, base.read_bytes() if base.exists() else None, new_id=sequential_ids(), conversation="jp-c1"
    )
    return loaded.unwrap()


def _same_text(folder: Path, tools: str, color: bool) -> None:
    stream = _stream(folder)
    identity = {"id": "jp-c1", "title": folder.name}
    options = ShowOptions(reasoning=True, tools=tools)  # type: ignore[arg-type]
    for selection in (TurnSelection(), TurnSelection(last=1), TurnSelection(span="0-0")):
        if isinstance(showing.shown_conversation(stream, identity, selection, options), Failure):
            continue
        whole = showing.shown_conversation(stream, identity, selection, options).unwrap()
        streamed = showing.shown_stream(stream, identity, selection, options).unwrap()
        text = showing.format_document(streamed, "text", 80, color).chunks(streamed.turns)
        assert "".join(text) == showing.rendered(whole, "text", 80, color)
        again = showing.shown_stream(stream, identity, selection, options).unwrap()
        document = json.dumps(whole.to_json(), ensure_ascii=False, indent=2)
        assert "".join(json_chunks(again)) == document
        for kind in ("md", "html"):
            view = showing.shown_stream(stream, identity, selection, options).unwrap()
            pieces = showing.format_document(view, kind).chunks(view.turns)
            assert "".join(pieces) == showing.rendered(whole, kind)


@pytest.mark.parametrize("folder", FIXTURE_FOLDERS, ids=lambda folder: folder.name)
@pytest.mark.parametrize(("tools", "color"), [("names", False), ("full", True)])
def test_the_streamed_text_is_the_whole_text(folder: Path, tools: str, color: bool) -> None:
    _same_text(folder, tools, color)


@pytest.mark.parametrize("folder", corpus_params())
def test_the_streamed_text_is_the_whole_text_on_the_corpus(folder: Path) -> None:
    _same_text(folder, "full", True)


def test_each_chunk_is_written_before_the_next_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    seen: list[str] = []

    def chunks() -> Iterator[str]:
        for number in range(3):
            seen.append(out.getvalue())
            yield f"turn {number}\n"

    pager.page_chunks(chunks(), {"PAGER": "less"})
    assert seen == ["", "turn 0\n", "turn 0\nturn 1\n"]


class _ClosedAfter(io.StringIO):
    """A stdout whose reader goes away after ``writes`` writes."""

    def __init__(self, writes: int) -> None:
        super().__init__()
        self.left = writes

    def write(self, text: str) -> int:
        if self.left == 0:
            raise BrokenPipeError(32, "Broken pipe")
        self.left -= 1
        return super().write(text)


def test_a_reader_that_stops_stops_the_rendering(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", _ClosedAfter(2))
    made: list[int] = []

    def chunks() -> Iterator[str]:
        for number in range(1000):
            made.append(number)
            yield f"turn {number}\n"

    with pytest.raises(BrokenPipeError):
        pager.page_chunks(chunks(), {})
    assert made == [0, 1, 2]


@pytest.mark.slow
def test_show_into_head_ends_quietly_with_the_first_lines(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO))
    from bench.huge import generate_long_conversation

    root = tmp_path / "ws"
    generate_long_conversation(root, turns=400)
    full = subprocess.run([TURNMARK, "-w", str(root), "show"], capture_output=True, check=True, timeout=120)
    head = subprocess.run(
        f"{TURNMARK} -w {root} show | head -n 7", shell=True, capture_output=True, check=True, timeout=120
    )
    assert head.stdout == b"".join(full.stdout.splitlines(keepends=True)[:7])
    assert head.stderr == b""


def test_json_of_no_turn_is_the_whole_documents_too() -> None:
    stream = _stream(FIXTURE_FOLDERS[0]).with_entries([])
    options = ShowOptions(reasoning=False, tools="full")
    whole = showing.shown_conversation(stream, {"id": "jp-c1"}, TurnSelection(), options).unwrap()
    streamed = showing.shown_stream(stream, {"id": "jp-c1"}, TurnSelection(), options).unwrap()
    assert "".join(json_chunks(streamed)) == json.dumps(whole.to_json(), ensure_ascii=False, indent=2)


def _one_conversation(root: Path, entries: list[bytes]) -> Path:
    folder = root / ".jp" / "conversations" / "17900000001-odd"
    folder.mkdir(parents=True)
    (folder / "events.json").write_bytes(b"[\n" + b",\n".join(entries) + b"\n]\n")
    (folder / "base_config.json").write_bytes(b"{}\n")
    (folder / "metadata.json").write_bytes(b'{"title": "Odd", "last_activated_at": "2026-01-01 10:00:00.0"}\n')
    return root


def _turn(number: int, *extra: bytes) -> list[bytes]:
    stamp = f"2026-01-01 10:0{number}:00.0".encode()
    return [
        b'{"event_id": "t%d", "timestamp": "%s", "type": "turn_start"}' % (number, stamp),
        b'{"event_id": "r%d", "timestamp": "%s", "type": "chat_request", "content": "turn %d"%s}'
        % (number, stamp, number, b"".join(extra)),
    ]


def test_a_file_the_full_reader_refuses_is_refused_before_a_turn_is_written(tmp_path: Path) -> None:
    """A number out of range in a key show never reads, in the first turn: the same one-line error as the full
    reader's, whatever turns are asked for (the lazy read never writes a turn of a file it cannot read)."""
    root = _one_conversation(tmp_path, [*_turn(0, b', "x": 1e999'), *_turn(1)])
    for chosen in ([], ["--last", "1"]):
        show = [TURNMARK, "-w", str(root), "show", "jp-c17900000001", *chosen]
        done = subprocess.run(show, check=False, capture_output=True, timeout=60)
        assert done.returncode == 2, done
        assert done.stdout == b""
        assert b"events.json" in done.stderr
        assert b"out of range" in done.stderr
        assert b"Traceback" not in done.stderr


def test_a_deeply_nested_value_is_shown_the_long_way(tmp_path: Path) -> None:
    """Deeper than the light reader reads (``light.DEEPEST``), within what the full reader reads: shown whole."""
    from turnmark.core.stream.light import DEEPEST

    nested = b'{"a": ' * (DEEPEST + 50) + b"1" + b"}" * (DEEPEST + 50)
    root = _one_conversation(tmp_path, [*_turn(0, b', "x": ' + nested), *_turn(1)])
    show = [TURNMARK, "-w", str(root), "show", "jp-c17900000001", "-F", "json"]
    done = subprocess.run(show, check=False, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [turn["index"] for turn in json.loads(done.stdout)["turns"]] == [0, 1]


def test_a_turn_that_cannot_be_read_as_it_is_shown_ends_show_with_the_full_readers_error(tmp_path: Path) -> None:
    """The first of a key written twice is a value the light reader never sees (the struct keeps the last): a
    number out of range there is found when its turn is read, after the turns before it were written. ``show``
    then stops with the error the full read gives, on one line, as a command that loads the conversation does."""
    root = _one_conversation(tmp_path, [*_turn(0), *_turn(1, b', "x": 1e999, "x": 1')])
    show = [TURNMARK, "-w", str(root), "show", "jp-c17900000001"]
    done = subprocess.run(show, check=False, capture_output=True, timeout=60)
    loaded = subprocess.run([*show, "-o", str(tmp_path / "out.md")], check=False, capture_output=True, timeout=60)
    assert (done.returncode, loaded.returncode) == (2, 2)
    assert done.stderr == loaded.stderr
    assert done.stderr.count(b"\n") == 1
    assert b"events.json" in done.stderr
    assert b"out of range" in done.stderr
    assert b"turn 0" in done.stdout
    assert b"turn 1" not in done.stdout


@pytest.fixture(scope="module")
def long_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace of one conversation long enough to be shown on two cores (400 turns, about 4 MB)."""
    sys.path.insert(0, str(REPO))
    from bench.huge import generate_long_conversation

    root = tmp_path_factory.mktemp("long")
    events = generate_long_conversation(root, turns=400) / "events.json"
    assert events.stat().st_size > showing.FORK_BYTES
    return root


def _show(root: Path, *arguments: str, jobs: str | None = None) -> subprocess.CompletedProcess[bytes]:
    chosen = ["--jobs", jobs] if jobs is not None else []
    command = [TURNMARK, "-w", str(root), *chosen, "show", *arguments]
    return subprocess.run(command, check=False, capture_output=True, timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize(
    "arguments",
    [(), ("-F", "md"), ("-F", "html"), ("-F", "json", "--reasoning"), ("--tools", "full", "--turns", "30-333")],
    ids=["text", "md", "html", "json", "span"],
)
def test_two_cores_write_what_one_writes(long_workspace: Path, arguments: tuple[str, ...]) -> None:
    """The default (a child per other core) and ``--jobs 1``: the same stdout, stderr and exit code."""
    alone = _show(long_workspace, *arguments, jobs="1")
    assert alone.returncode == 0, alone.stderr
    for jobs in (None, "3"):
        shared = _show(long_workspace, *arguments, jobs=jobs)
        assert (shared.returncode, shared.stderr) == (0, alone.stderr)
        assert shared.stdout == alone.stdout


def _edited_copy(root: Path, name: str, mark: bytes, turn: int, edit: Callable[[bytes, int], bytes]) -> Path:
    """A copy of the long workspace (``name`` beside it, made again) whose ``events.json`` is ``edit(data, place)``,
    ``place`` where ``mark`` occurs for the ``turn``-th time (once a turn)."""
    copy = root.parent / f"{root.name}-{name}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy)
    (events,) = copy.glob(".jp/conversations/*/events.json")
    data = events.read_bytes()
    place = -1
    for _ in range(turn + 1):
        place = data.index(mark, place + 1)
    events.write_bytes(edit(data, place))
    return copy


def _with_unreadable_turn(root: Path, turn: int) -> Path:
    """A copy of the long workspace whose ``turn``-th request has a key written twice, the first out of range (a
    value the light read never sees: found when the turn is shown)."""
    mark = b'"type": "chat_request"'
    return _edited_copy(root, f"{turn}", mark, turn, lambda data, at: data[:at] + b'"x": 1e999, "x": 1, ' + data[at:])


@pytest.mark.slow
@pytest.mark.parametrize("turn", [3, 40, 399])
def test_a_turn_that_cannot_be_read_on_two_cores(long_workspace: Path, turn: int) -> None:
    """Wherever the turn is (a block this process makes, or a child's), the turns before it are written, then the
    full reader's error: what one process writes."""
    root = _with_unreadable_turn(long_workspace, turn)
    alone = _show(root, jobs="1")
    assert alone.returncode == 2
    assert b"out of range" in alone.stderr
    assert f"Turn {turn - 1} ".encode() in alone.stdout
    assert f"Turn {turn} ".encode() not in alone.stdout
    shared = _show(root)
    assert (shared.returncode, shared.stdout, shared.stderr) == (alone.returncode, alone.stdout, alone.stderr)


FORKS_COUNTED = """
import atexit, os, runpy, sys
forks = []
real_fork = os.fork
def counted():
    pid = real_fork()
    if pid:
        forks.append(pid)
    return pid
os.fork = counted
atexit.register(lambda: print(f"forks={len(forks)}", file=sys.stderr))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.slow
@pytest.mark.parametrize(("jobs", "forks"), [("2", 1), ("3", 2), ("1", 0)])
def test_the_children_a_long_conversation_is_shown_with(long_workspace: Path, jobs: str, forks: int) -> None:
    command = [sys.executable, "-c", FORKS_COUNTED, TURNMARK, "-w", str(long_workspace), "--jobs", jobs, "show"]
    done = subprocess.run(command, check=False, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode().splitlines()[-1] == f"forks={forks}"


def test_how_many_children_help() -> None:
    big, small = showing.FORK_BYTES, showing.FORK_BYTES - 1
    assert showing.helpers_for(big, 400, 2) == (1, showing.BLOCK_BYTES * 400 // big)
    assert showing.helpers_for(big, 400, 4)[0] == 3
    assert showing.helpers_for(big * 100, 2, 2) == (1, 1)
    assert showing.helpers_for(small, 400, 2)[0] == 0
    assert showing.helpers_for(big, 400, 1)[0] == 0
    assert showing.helpers_for(big, 1, 2)[0] == 0


def _with_deep_data(root: Path, turn: int, depth: int) -> Path:
    """A copy of the long workspace whose ``turn``-th reasoning is structured data ``depth`` arrays deep."""
    mark = b'"type": "chat_response",\n    "reasoning": "'
    deep = b'"type": "chat_response",\n    "data": ' + b"[" * depth + b"]" * depth

    def edit(data: bytes, at: int) -> bytes:
        return data[:at] + deep + data[data.index(b'"', at + len(mark)) + 1 :]

    return _edited_copy(root, "deep", mark, turn, edit)


@pytest.mark.slow
@pytest.mark.parametrize("turn", [3, 40])
def test_data_nested_about_as_deep_as_python_goes_is_shown_as_one_process_shows_it(
    long_workspace: Path, turn: int
) -> None:
    """Around the deepest data one process lays out (found here: it depends on Python's recursion limit), two
    cores show the same, or stop with the same error, wherever the turn is."""
    low, high = 100, 3000
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (
            (middle, high)
            if _show(_with_deep_data(long_workspace, turn, middle), jobs="1").returncode == 0
            else (low, middle)
        )
    for depth in (low - 1, low, high, high + 1):
        root = _with_deep_data(long_workspace, turn, depth)
        alone, shared = _show(root, jobs="1"), _show(root)
        assert (shared.returncode, shared.stdout, shared.stderr) == (alone.returncode, alone.stdout, alone.stderr), (
            depth
        )

"""``turnmark find`` against real fixture workspaces: ranking, the query language, scopes, outputs, the index
as a cache (incremental, deleted, corrupted, linked), and the hits feeding ``transcript``, ``fork`` and ``edit``."""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import os
import sqlite3
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from turnmark.core.search import freshness
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import IdSource, sequential_ids
from turnmark.core.stream.payloads import ChatRequest, ChatResponse, ToolCallRequest, ToolCallResponse
from turnmark.shell.cli import finding as finding_cli
from turnmark.shell.storage import cache_db
from turnmark.shell.storage.cache_db import SCHEMA_VERSION, CacheBusy, open_cache
from turnmark.shell.storage.conversations import LoadedConversation, read_conversation
from turnmark.shell.storage.workspace import ConversationRef, require_workspace
from turnmark.shell.usecases import finding

from .test_cli import Run


def index(workspace: Path) -> Path:
    """The workspace's index file, in its folder under the (test's) cache home."""
    return cache_db.cache_path(require_workspace(workspace))


def add_conversation(
    workspace: Path, conversation_id: int, title: str, day: str, turns: list[dict[str, object]]
) -> Path:
    """A conversation as JP writes it, made with the core's stream (one dict per turn)."""
    ts = f"{day} 09:00:00.0"
    stream = ConversationStream.empty({}, new_id=sequential_ids())
    for turn in turns:
        stream = stream.start_turn(ChatRequest(ts, str(turn["request"])))
        if "tool" in turn:
            tool = turn["tool"]
            assert isinstance(tool, tuple)
            stream = stream.extend(
                [ToolCallRequest(ts, "call_1", str(tool[0]), {}), ToolCallResponse(ts, "call_1", str(tool[1]), False)]
            )
        if "reasoning" in turn:
            stream = stream.push(ChatResponse(ts, "reasoning", str(turn["reasoning"])))
        stream = stream.push(ChatResponse(ts, "message", str(turn.get("answer", "Done."))))
        if "label" in turn:
            turn_id = stream.turns()[-1].id()
            assert turn_id is not None
            stream = stream.set_turn_summary(turn_id, str(turn["label"])).unwrap()
    directory = workspace / ".jp" / "conversations" / f"{conversation_id}-{title.lower().replace(' ', '-')}"
    directory.mkdir(parents=True)
    (directory / "events.json").write_bytes(stream.to_json())
    (directory / "base_config.json").write_bytes(stream.base_config_json() or b"{}")
    (directory / "metadata.json").write_text(json.dumps({"title": title, "last_activated_at": ts}))
    return directory


@pytest.fixture
def searchable(workspace: Path) -> Path:
    add_conversation(
        workspace,
        17900000001,
        "Timer work",
        "2026-03-01",
        [
            {"request": "Make the timer less jumpy", "label": "Tune the watchdog timer"},
            {"request": "Run the suite", "tool": ("cargo_test", "watchdog restarted 3 times"), "answer": "It passed."},
            {
                "request": "Explain exponential backoff",
                "answer": "Exponential backoff doubles the wait.",
                "reasoning": "Think of jitter.",
            },
        ],
    )
    add_conversation(
        workspace,
        17900000002,
        "Config questions",
        "2026-03-10",
        [{"request": "Where is the watchdog configured?", "answer": "In config.toml, under [watchdog]."}],
    )
    return workspace


@pytest.fixture
def run(searchable: Path) -> Run:
    return Run(searchable)


def references(out: str) -> list[str]:
    return out.split()


def test_a_word_in_a_summary_outranks_the_same_word_in_a_request_answer_and_tool_result(run: Run) -> None:
    out, _ = run("find", "watchdog", "--in", "summaries,requests,answers,results", "--output", "ids")
    assert references(out) == ["jp-c17900000001:e000001", "jp-c17900000002:e000001", "jp-c17900000001:e000004"]


def test_tool_results_and_reasoning_are_searched_only_when_asked(run: Run) -> None:
    out, _ = run("find", "restarted", code=1)
    assert out == ""
    out, _ = run("find", "restarted", "--in", "results", "--output", "ids")
    assert references(out) == ["jp-c17900000001:e000004"]
    out, _ = run("find", "jitter", "--in", "reasoning", "--output", "ids")
    assert references(out) == ["jp-c17900000001:e000009"]


def test_phrases_prefixes_and_exclusions(run: Run) -> None:
    assert references(run("find", '"doubles the wait"', "-o", "ids")[0]) == ["jp-c17900000001:e000009"]
    assert run("find", '"wait the doubles"', "-o", "ids", code=1)[0] == ""
    out, _ = run("find", "watch*", "-o", "ids")
    assert references(out) == ["jp-c17900000001:e000001", "jp-c17900000002:e000001"]
    out, _ = run("find", "watchdog -configured", "-o", "ids")
    assert references(out) == ["jp-c17900000001:e000001"]
    out, _ = run("find", 'backoff -"exponential backoff"', "-o", "ids")
    assert "jp-c17900000001:e000009" not in references(out)


def test_titles_are_searched_with_in_titles(run: Run) -> None:
    assert run("find", "questions", code=1)[0] == ""
    assert references(run("find", "questions", "--in", "titles", "-o", "ids")[0]) == ["jp-c17900000002:e000001"]


def test_since_and_conversations_narrow_the_search(run: Run) -> None:
    assert references(run("find", "watchdog", "--since", "2026-03-05", "-o", "ids")[0]) == ["jp-c17900000002:e000001"]
    assert references(run("find", "watchdog", "17900000001", "-o", "ids")[0]) == ["jp-c17900000001:e000001"]


def test_count_and_hits_text(run: Run) -> None:
    assert run("find", "watchdog", "--output", "count") == (
        "2\n",
        "note: building the search index <cache>/cache.sqlite3 (once; later searches read only what changed)\n",
    )
    out, err = run("find", "watchdog", "--limit", "1")
    assert out == (
        "jp-c17900000001  turn 0 (e000001)  2026-03-01  Tune the watchdog timer\n    Tune the [watchdog] timer\n"
    )
    assert err == "1 of 2 matching turns shown (--limit N for more)\n"


def test_a_fallback_label_is_marked_and_excluded_events_are_found_and_marked(run: Run) -> None:
    out, _ = run("find", '"lock.rs"', "--in", "tools")
    assert out == (
        "jp-c17800000040  turn 2 (a2turn0)  2026-06-03  ~Show me the lock code.\n"
        '    (excluded) fs_read_file {"path":"crates/jp_storage/src/[lock.rs]"}\n'
    )


def test_turns_a_compaction_covers_are_still_found(run: Run) -> None:
    out, _ = run("find", "locks", "-o", "ids")
    assert "jp-c17800000040:a1turn0" in references(out)


def test_json(run: Run, snapshot: SnapshotAssertion) -> None:
    out, _ = run("find", "backoff", "--format", "json")
    document = json.loads(out)
    assert document["total"] == len(document["hits"]) == 3
    first = next(hit for hit in document["hits"] if hit["reference"] == "jp-c17800000010:k3m9x2a")
    assert (first["scope"], first["event_id"], first["label_source"]) == ("summaries", "k3m9x2a", "summary")
    start, end = first["marks"][0]
    assert first["snippet"][start:end] == "backoff"
    assert out == snapshot


def test_regex_scans_exactly(run: Run) -> None:
    out, _ = run("find", "--regex", r"restarted \d+ times", "--in", "results")
    assert out == ("jp-c17900000001  turn 1 (e000004)  2026-03-01  ~Run the suite\n    watchdog [restarted 3 times]\n")
    assert run("find", "--regex", "watch.og", "-o", "count")[0] == "2\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (('lock "race',), 'error: query: unbalanced quote at position 6 (a phrase is written "like this")\n'),
        (
            ("--", "-flaky"),
            "error: query: only words to leave out at position 2 (give at least one word to look for)\n",
        ),
        (("lo*ck",), "error: query: '*' can only end a word (prefix*) at position 3\n"),
        (
            ("a", "--in", "summaries,answer"),
            "error: --in: unknown scope 'answer' at position 11 (scopes: summaries, titles, "
            "requests, answers, tools, results, reasoning)\n",
        ),
        (
            ("a", "--since", "yesterday"),
            "error: --since: not a date (YYYY-MM-DD[THH:MM[:SS]]) or an age (36h, 7d, 2w) at position 1\n",
        ),
        (
            ("(unclosed", "--regex"),
            "error: regex: missing ): (unclosed (RE2 syntax: no backreferences or lookarounds)\n",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run: Run, args: tuple[str, ...], message: str) -> None:
    assert run("find", *args, code=2) == ("", message)


def test_without_fts5_find_says_so_in_one_line_and_regex_still_works(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_db, "fts5_available", lambda: False)
    out, err = run("find", "watchdog", code=2)
    assert out == ""
    assert err.startswith("error: this Python's SQLite ")
    assert err.endswith(" has no FTS5 full-text index, which find needs; find --regex searches without it\n")
    assert run("find", "--regex", "watchdog", "-o", "count")[0] == "2\n"


def test_an_unreadable_conversation_is_skipped_with_one_line_and_counted(
    run: Run, searchable: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = next((searchable / ".jp" / "conversations").glob("17790000000-*")) / "events.json"
    events.write_bytes(b"[{")
    reads: list[str] = []

    def counted_read(
        ref: ConversationRef,
        new_id: IdSource,
        *,
        digest: bool = False,
        hash_events: bool = True,
        count_keys: bool = True,
    ) -> LoadedConversation:
        reads.append(ref.display_id)
        return read_conversation(ref, new_id, digest=digest, hash_events=hash_events, count_keys=count_keys)

    monkeypatch.setattr(finding, "read_conversation", counted_read)
    for path in (searchable / ".jp" / "conversations").rglob("*.json"):
        os.utime(path, (1_700_000_000, 1_700_000_000))
    for _ in range(2):
        out, err = run("find", "watchdog", "-o", "count")
        assert out == "2\n"
        assert (
            "note: skipped jp-c17790000000: <ws>/.jp/conversations/17790000000-explain-the-build-script/"
            "events.json: line 1, column 3" in err
        )
        assert err.endswith("note: 1 unreadable conversation skipped\n")
    assert reads.count("jp-c17790000000") == 1


def test_user_local_conversations_are_searched_and_the_index_lives_with_the_user(
    searchable: Path, user_data: Path
) -> None:
    silo = user_data / "workspace" / "ws-fx001"
    add_conversation(silo, 17900000009, "Local only", "2026-03-11", [{"request": "Where did the pelican go?"}])
    (silo / ".jp" / "conversations").rename(silo / "conversations")
    (silo / ".jp").rmdir()
    out, _ = Run(searchable)("find", "pelican", "-o", "ids")
    assert references(out) == ["jp-c17900000009:e000001"]
    assert index(searchable).is_file()
    assert not (silo / ".turnmark").exists()
    assert not (searchable / ".jp" / ".turnmark").exists()


# The index as a cache ------------------------------------------------------------------------------


def stored_turns(workspace: Path) -> dict[tuple[str, int], tuple[int, str]]:
    with sqlite3.connect(index(workspace)) as connection:
        rows = connection.execute("SELECT conversation, turn_index, id, digest FROM turns").fetchall()
    return {(conversation, index): (rowid, digest) for conversation, index, rowid, digest in rows}


def checked(workspace: Path) -> dict[str, int]:
    with sqlite3.connect(index(workspace)) as connection:
        return dict(connection.execute("SELECT conversation, checked_ns FROM conversations").fetchall())


def append_turn(directory: Path, text: str) -> None:
    """What JP does: the whole file rewritten through ``events.json.tmp`` and a rename."""
    entries = json.loads((directory / "events.json").read_bytes())
    ts = "2026-03-12 09:00:00.0"
    entries += [
        {"event_id": "n1turn0", "timestamp": ts, "type": "turn_start"},
        {"event_id": "n1req00", "timestamp": ts, "type": "chat_request", "content": text},
    ]
    (directory / "events.json.tmp").write_text(json.dumps(entries, indent=2))
    os.replace(directory / "events.json.tmp", directory / "events.json")


def test_after_one_conversation_changed_only_it_is_read_again(
    run: Run, searchable: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(freshness, "RACY_NS", 0)  # the files' change times are now; nothing else writes them
    for path in (searchable / ".jp" / "conversations").rglob("*.json"):
        os.utime(path, (1_700_000_000, 1_700_000_000))
    run("find", "watchdog")
    before, looked = stored_turns(searchable), checked(searchable)
    directory = next((searchable / ".jp" / "conversations").glob("17900000002-*"))
    append_turn(directory, "Rotate the flamingo credentials")
    out, _ = run("find", "flamingo", "-o", "ids")
    assert references(out) == ["jp-c17900000002:n1turn0"]
    after, relooked = stored_turns(searchable), checked(searchable)
    assert {key: value for key, value in after.items() if key != ("jp-c17900000002", 1)} == before
    changed = {conversation for conversation in looked if relooked[conversation] != looked[conversation]}
    assert changed == {"jp-c17900000002"}


def test_a_label_change_rewrites_that_turns_row_only(run: Run, searchable: Path) -> None:
    run("find", "watchdog")
    before = stored_turns(searchable)
    run("label", "17900000001", "2", "Backoff explained with a pelican")
    after = stored_turns(searchable)
    assert references(run("find", "pelican", "-o", "ids")[0]) == ["jp-c17900000001:e000009"]
    changed = {key for key in after if after[key] != before.get(key)}
    assert changed == {("jp-c17900000001", 2)}


def test_watch_keeps_the_index_fresh_as_it_summarizes(run: Run, searchable: Path) -> None:
    def fallbacks() -> int:
        with sqlite3.connect(index(searchable)) as connection:
            return int(connection.execute("SELECT count(*) FROM turns WHERE label_source = 'fallback'").fetchone()[0])

    run("find", "watchdog")
    before = fallbacks()
    _, err = run("watch", "--once", code=1)
    assert "summarized 2 turns with builtin/extractive" in err
    with sqlite3.connect(index(searchable)) as connection:
        stored = connection.execute(
            "SELECT directory, events_sha256, events_mtime_ns, events_ctime_ns, checked_ns FROM conversations"
        ).fetchall()
    for directory, sha, mtime, ctime, checked in stored:
        held = hashlib.sha256((Path(directory) / "events.json").read_bytes()).hexdigest()
        settled = max(mtime, ctime) < checked - freshness.RACY_NS
        assert sha == held or (settled and sha == ""), directory
    assert fallbacks() < before


@pytest.mark.parametrize("settled", [False, True])
def test_the_index_build_hashes_only_what_its_identity_cannot_vouch_for(
    run: Run, searchable: Path, monkeypatch: pytest.MonkeyPatch, settled: bool
) -> None:
    """As a listing's read: an ``events.json`` settled when looked at is trusted by its identity (no hash kept,
    so only that identity keeps its row), a young one by its bytes (the hash of what it holds)."""
    if settled:
        monkeypatch.setattr(freshness, "RACY_NS", 0)
        for path in (searchable / ".jp" / "conversations").rglob("*.json"):
            os.utime(path, (1_700_000_000, 1_700_000_000))
    run("find", "watchdog")
    with sqlite3.connect(index(searchable)) as connection:
        stored = connection.execute("SELECT directory, events_sha256 FROM conversations").fetchall()
    assert stored
    for directory, sha in stored:
        held = hashlib.sha256((Path(directory) / "events.json").read_bytes()).hexdigest()
        assert sha == ("" if settled else held), directory


def test_a_deleted_index_is_built_again(run: Run, searchable: Path) -> None:
    run("find", "watchdog")
    (index(searchable)).unlink()
    out, err = run("find", "watchdog", "-o", "count")
    assert out == "2\n"
    assert "building the search index" in err


@pytest.mark.parametrize("damage", ["garbage", "truncated", "version"])
def test_a_corrupted_index_is_built_again_with_a_note(run: Run, searchable: Path, damage: str) -> None:
    run("find", "watchdog")
    path = index(searchable)
    if damage == "garbage":
        path.write_bytes(b"not a database at all" * 100)
    elif damage == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[:4096] + b"\x00" * (len(data) - 4096))
    else:
        with sqlite3.connect(path) as connection:
            connection.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    out, err = run("find", "watchdog", "-o", "count")
    assert out == "2\n"
    assert "could not be used" in err
    assert "built again" in err
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert connection.execute("SELECT value FROM meta").fetchone() == (str(SCHEMA_VERSION),)


def test_a_linked_index_folder_is_refused_and_the_search_still_runs(run: Run, searchable: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    index(searchable).parent.parent.mkdir(parents=True)
    index(searchable).parent.symlink_to(elsewhere)
    out, err = run("find", "watchdog", "-o", "count")
    assert out == "2\n"
    assert "is a symbolic link, and turnmark never writes through links" in err
    assert "searching without the index file" in err
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("name", ["cache.sqlite3", "cache.sqlite3-wal", "cache.sqlite3-shm"])
def test_a_linked_index_file_is_refused(run: Run, searchable: Path, tmp_path: Path, name: str) -> None:
    target = tmp_path / "target"
    target.write_bytes(b"")
    index(searchable).parent.mkdir(parents=True)
    (index(searchable).parent / name).symlink_to(target)
    out, err = run("find", "watchdog", "-o", "count")
    assert out == "2\n"
    assert f"{name}: not written: it is a symbolic link" in err
    assert target.read_bytes() == b""


def test_a_second_writer_waits_for_the_lock_of_the_index(searchable: Path) -> None:
    workspace = require_workspace(searchable)
    first, second = open_cache(workspace), open_cache(workspace)
    assert first is not None
    assert second is not None
    with first, second:
        with first.writing(), pytest.raises(CacheBusy, match="another turnmark is writing"), second.writing(wait=0.05):
            pass
        with second.writing(wait=0.05):
            pass


def test_while_another_writer_holds_the_index_too_long_the_search_runs_in_memory(
    run: Run, searchable: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("find", "watchdog")
    append_turn(next((searchable / ".jp" / "conversations").glob("17900000002-*")), "Rotate the flamingo credentials")
    monkeypatch.setattr(cache_db, "LOCK_WAIT", 0.1)
    holder = open_cache(require_workspace(searchable))
    assert holder is not None
    with holder, holder.writing():
        out, err = run("find", "flamingo", "-o", "ids")
    assert references(out) == ["jp-c17900000002:n1turn0"]
    assert "another turnmark is writing the workspace cache" in err
    assert "searching without the index file this time (slower)" in err
    assert run("find", "flamingo", "-o", "ids") == (out, "")


# Hits feed the next command --------------------------------------------------------------------------


def test_ids_feed_transcript_show_fork_and_edit(run: Run, searchable: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    [reference] = references(run("find", '"doubles the wait"', "-o", "ids")[0])
    out, _ = run("transcript", "--turn", reference)
    assert out.startswith('<turn id="e000009">\n<request>Explain exponential backoff</request>')
    out, _ = run("fork", "--until", reference)
    assert out.split()[1:4] == ["forked", "from", "jp-c17900000001"]
    assert "(turns 0-2)" in out
    _, err = run("transcript", "17800000010", "--turn", reference, code=2)
    assert err == "error: 'jp-c17900000001:e000009' is a turn of jp-c17900000001, not of 17800000010\n"
    out, _ = run("show", "--turn", reference, "--format", "md")
    assert "Explain exponential backoff" in out
    assert "Make the timer less jumpy" not in out
    monkeypatch.setenv("JP_EDITOR", "true")
    _, err = run("edit", "-i", "--no-summary", reference)
    assert "turn e000009 is the block '# Turn N (e000009): …' in the plan" in err


def test_the_find_command_function_is_under_50_lines_and_needs_no_unreachable_raise() -> None:
    """Issue 31: ``find``'s options are aliases and its work is the use case's; ``_search`` ends on a return."""
    command = ast.parse(inspect.getsource(finding_cli)).body
    [function] = [node for node in command if isinstance(node, ast.FunctionDef) and node.name == "find"]
    assert function.end_lineno is not None
    assert function.end_lineno - function.lineno + 1 < 50
    assert "unreachable" not in inspect.getsource(finding)

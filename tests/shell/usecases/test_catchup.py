"""Catch-up end to end on real workspaces, with model servers on loopback (RFD 126 Phase 4 in the shell)."""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.shell.storage.test_locking import hold, release
from tests.support.llm_servers import Behaviour, ModelServer, requested_ids
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.summaries.labels import label_turn
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.settings import HttpSettings
from turnmark.shell.storage import workspace_cache
from turnmark.shell.storage.conversations import edit_conversation, read_conversation
from turnmark.shell.storage.failure_memory import load_memory
from turnmark.shell.storage.locking import lock_path
from turnmark.shell.storage.selection import pick_conversation
from turnmark.shell.storage.workspace import ConversationRef
from turnmark.shell.usecases.catchup_report import CatchupOptions
from turnmark.shell.usecases.summarize import catch_up

FAST = HttpSettings(connect_timeout=0.5, read_timeout=0.5, retries=1, backoff=0.01, backoff_cap=0.02)
CLEAN = "17800000040"


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


def use_model(workspace: Path, server: ModelServer, model: str = "ollama/llama3.2:3b") -> None:
    (workspace / ".jp" / "config.toml").write_text(
        f'[conversation.turn_summary.generate.model]\nid = "{model}"\n'
        f'[providers.llm.ollama]\nbase_url = "{server.url}"\n[providers.llm.openai]\nbase_url = "{server.url}"\n'
    )


def run(ref: ConversationRef, **options: Any) -> Any:
    return catch_up(
        ref, CatchupOptions(environ={"OPENAI_API_KEY": "sk-test"}, http=FAST, **options), sequential_ids("n")
    )


def summaries(ref: ConversationRef) -> dict[str, tuple[str | None, str | None]]:
    stream = read_conversation(ref, sequential_ids("r")).stream
    from turnmark.core.stream.turns import summary_source

    return {turn.id() or "": (turn.summary(), summary_source(turn)) for turn in stream.turns()}


def test_turns_are_summarized_by_the_configured_model(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)
    report = run(ref)
    assert report.error is None
    assert set(report.written) == {"a1turn0", "a2turn0", "a3turn0"}
    assert summaries(ref)["a2turn0"] == ("Summary of a2turn0", "ollama/llama3.2:3b")
    assert summaries(ref)["a0turn0"] == ("Explore the workspace layout", None), "a stored summary is left alone"
    [post] = server.posts()
    assert '<turn id="a2turn0">' in post.body["messages"][1]["content"]  # type: ignore[index]
    assert run(ref).written == {}, "a second run finds nothing to do"
    assert len(server.posts()) == 1


def test_batches_follow_batch_size_newest_first(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)
    report = run(ref, cfg=("conversation.turn_summary.generate.batch_size=2",))
    assert [requested_ids(post.body or {}) for post in server.posts()] == [["a2turn0", "a3turn0"], ["a1turn0"]]
    assert len(report.written) == 3


def edit_while_answering(events: Path, old: str, new: str) -> Callable[[dict[str, Any]], str]:
    """A model's answer (``S <turn ID>`` for each turn asked) given after another process edited ``events``."""

    def answer(body: dict[str, Any]) -> str:
        events.write_text(events.read_text().replace(old, new))
        return json.dumps({"summaries": {turn_id: f"S {turn_id}" for turn_id in requested_ids(body)}})

    return answer


def test_an_edit_to_a_turn_between_request_and_sync_leaves_its_summary_empty(
    workspace: Path, server: ModelServer
) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)
    events = ref.directories[0] / "events.json"
    edit = edit_while_answering(events, "And the locks?", "And where do the locks live?")
    server.queue.append(Behaviour(content=edit))
    report = run(ref)
    assert report.dropped == {"a1turn0": "the turn changed while its summary was written"}
    state = summaries(ref)
    assert state["a1turn0"] == (None, None)
    assert state["a2turn0"] == ("S a2turn0", "ollama/llama3.2:3b")
    assert "And where do the locks live?" in events.read_text(), "the other process's edit is kept"


def test_a_locked_conversation_is_not_written_and_is_retried(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)
    events = ref.directories[0] / "events.json"
    before = events.read_bytes()
    holder = hold(lock_path(ref))
    try:
        report = run(ref)
        assert report.written == {}
        assert report.locked
        assert report.skipped == f"locked by pid {holder.pid} (a running jp?); retried next time"
        assert server.posts() == [], "no model is asked while the conversation is locked"
        assert events.read_bytes() == before
    finally:
        release(holder)
    assert len(run(ref).written) == 3


FAULTS: dict[str, Behaviour | None] = {
    "refused connection": None,
    "timeout": Behaviour(delay=1.5),
    "HTTP error": Behaviour(status=500),
    "invalid JSON": Behaviour(content=lambda body: "{not json"),
    "schema mismatch": Behaviour(content=lambda body: json.dumps({"labels": ["x"]})),
    "unknown IDs": Behaviour(content=lambda body: json.dumps({"summaries": {"zzzzzzz": "Elsewhere"}})),
    "missing IDs": Behaviour(content=lambda body: json.dumps({"summaries": {}})),
    "blank text": Behaviour(
        content=lambda body: json.dumps({"summaries": dict.fromkeys(requested_ids(body), " \n\x1b[2J\t")})
    ),
}


SALVAGED = {
    "multi-line text": ("\n  Fix the lock race\nand more detail", "Fix the lock race"),
    "oversized text": (
        "Rename the storage crate and update every import across the workspace, then run all tests again",
        "Rename the storage crate and update every import across the workspace…",
    ),
    "escape sequences": ("\x1b]0;pwned\x07Run   the \x1b[31mtests", "Run the tests"),
}


@pytest.mark.parametrize("case", list(SALVAGED))
def test_a_salvageable_answer_is_normalized_and_stored(workspace: Path, server: ModelServer, case: str) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)
    answer, stored = SALVAGED[case]
    server.queue.append(
        Behaviour(content=lambda body: json.dumps({"summaries": dict.fromkeys(requested_ids(body), answer)}))
    )
    report = run(ref)
    assert set(report.written.values()) == {stored}
    assert len(stored) <= 72
    assert {summaries(ref)[turn_id][0] for turn_id in report.written} == {stored}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_model_failure_writes_nothing_and_leaves_the_turns_for_the_next_run(
    workspace: Path, server: ModelServer, fault: str
) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)
    if FAULTS[fault] is None:
        (workspace / ".jp" / "config.toml").write_text(
            '[conversation.turn_summary.generate.model]\nid = "ollama/llama3.2:3b"\n'
            '[providers.llm.ollama]\nbase_url = "http://127.0.0.1:9"\n'
        )
    else:
        server.queue.extend([FAULTS[fault]] * 3)  # type: ignore[list-item]
    events = ref.directories[0] / "events.json"
    before = events.read_bytes()
    report = run(ref)
    assert report.written == {}
    assert events.read_bytes() == before
    reasons = [report.error] if report.error else list(report.refused.values())
    assert reasons
    assert all(reason and "\n" not in reason for reason in reasons)
    server.queue.clear()
    use_model(workspace, server)
    assert len(run(ref).written) == 3, "the next run succeeds"


def test_a_legacy_conversation_gets_its_turn_start_and_ids_first(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, "17790000000")
    report = run(ref)
    assert report.error is None
    stream = read_conversation(ref, sequential_ids("r")).stream
    assert not stream.is_legacy
    assert not any(entry.transient_id for entry in stream.entries)
    assert [turn.summary() for turn in stream.turns()] == [f"Summary of {turn.id()}" for turn in stream.turns()]
    assert stream.entries[0].type_tag == "turn_start"


def test_dry_run_calls_no_model_and_writes_nothing(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, "17790000000")
    before = {path.name: path.read_bytes() for path in ref.directories[0].iterdir()}
    report = run(ref, dry_run=True)
    assert [row["batch"] for row in report.plan] == [1, 1]
    assert server.posts() == []
    assert {path.name: path.read_bytes() for path in ref.directories[0].iterdir()} == before


def test_an_oversized_turn_is_left_out_without_a_request(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    server.context_window = 300
    ref = pick_conversation(workspace, CLEAN)
    report = run(ref, dry_run=True)
    assert {row["excluded"] for row in report.plan} == {"too_large"}
    report = run(ref)
    assert server.posts() == []
    assert report.written == {}


def test_upgrade_replaces_offline_summaries_but_never_the_users(workspace: Path, server: ModelServer) -> None:
    ref = pick_conversation(workspace, CLEAN)
    assert len(run(ref).written) == 3
    assert summaries(ref)["a1turn0"][1] == "builtin/extractive"
    edit_conversation(ref, lambda s: label_turn(s, "a2turn0", "Mine", "user").unwrap(), sequential_ids())
    use_model(workspace, server)
    assert run(ref).written == {}, "without --upgrade nothing is redone"
    report = run(ref, upgrade=True)
    assert set(report.written) == {"a1turn0", "a3turn0"}
    assert summaries(ref)["a2turn0"] == ("Mine", "user")
    assert summaries(ref)["a1turn0"] == ("Summary of a1turn0", "ollama/llama3.2:3b")


def test_the_offline_summarizer_stands_in_for_an_assistant_model_it_cannot_use(workspace: Path) -> None:
    (workspace / ".jp" / "config.toml").unlink()
    ref = pick_conversation(workspace, CLEAN)
    report = run(ref)
    assert report.model == "builtin/extractive"
    assert report.notes == [
        "using builtin/extractive: anthropic/claude-haiku-4-5: ANTHROPIC_API_KEY is not set (needed for "
        "anthropic/claude-haiku-4-5)"
    ]
    assert summaries(ref)["a3turn0"] == ("Run the storage tests", "builtin/extractive")


def test_the_offline_summarizer_labels_a_conversation_once_for_all_its_batches(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Labelling is done for the whole conversation at once; doing it again for every batch made a long
    conversation's catch-up quadratic."""
    from turnmark.core.summaries import extractive
    from turnmark.shell.storage import conversations
    from turnmark.shell.usecases import summary_session

    (workspace / ".jp" / "config.toml").write_text(
        "[conversation.turn_summary.generate]\nbatch_size = 1\n"
        '[conversation.turn_summary.generate.model]\nid = "builtin/extractive"\n'
    )
    calls: list[int] = []
    labelled = extractive.extractive_labels

    def counting(*args: Any, **kwargs: Any) -> dict[str, str]:
        calls.append(1)
        return labelled(*args, **kwargs)

    saves: list[int] = []
    saved = conversations.save_stream

    def counting_saves(*args: Any, **kwargs: Any) -> Any:
        saves.append(1)
        return saved(*args, **kwargs)

    monkeypatch.setattr(summary_session, "extractive_labels", counting)
    monkeypatch.setattr("turnmark.shell.usecases.summary_writer.save_stream", counting_saves)
    report = run(pick_conversation(workspace, CLEAN))
    assert len(report.written) == 3, "three batches of one turn"
    assert len(calls) == 1
    assert len(saves) == 1, "the offline answers are written in one save, not one per batch"


def test_an_explicitly_configured_model_that_cannot_be_used_is_an_error(workspace: Path) -> None:
    (workspace / ".jp" / "config.toml").write_text('[conversation.turn_summary.generate.model]\nid = "anthropic/x"\n')
    report = run(pick_conversation(workspace, CLEAN))
    assert report.error == (
        f"anthropic/x (conversation.turn_summary.generate.model in {workspace / '.jp' / 'config.toml'}): "
        "ANTHROPIC_API_KEY is not set (needed for anthropic/x); set it, or summarize offline with "
        "--model builtin/extractive"
    )
    assert report.written == {}


def test_a_conversation_with_an_ambiguous_link_reports_it_and_writes_nothing(workspace: Path) -> None:
    ref = pick_conversation(workspace, "17800000030")
    before = (ref.directories[0] / "events.json").read_bytes()
    report = run(ref)
    assert report.error is not None
    assert "refusing to save" in report.error
    assert (ref.directories[0] / "events.json").read_bytes() == before


def test_a_dry_run_predicts_the_refusal_with_the_saves_own_reason(workspace: Path) -> None:
    ref = pick_conversation(workspace, "17800000030")
    predicted = run(ref, dry_run=True)
    assert predicted.plan
    assert predicted.error is None
    assert predicted.save_refused == run(ref).error
    assert not predicted.done
    assert run(pick_conversation(workspace, CLEAN), dry_run=True).save_refused is None


def test_a_leftover_lock_file_does_not_hide_the_last_turn_but_a_held_lock_does(workspace: Path) -> None:
    ref = pick_conversation(workspace, CLEAN)
    path = lock_path(ref)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"pid": 1}')
    assert [row["turn"] for row in run(ref, dry_run=True).plan] == ["a1turn0", "a2turn0", "a3turn0"]
    holder = hold(path)
    try:
        assert [row["turn"] for row in run(ref, dry_run=True).plan] == ["a1turn0", "a2turn0"]
    finally:
        release(holder)


def test_the_offline_summarizer_has_no_size_limit(workspace: Path) -> None:
    ref = pick_conversation(workspace, CLEAN)
    events = ref.directories[0] / "events.json"
    events.write_text(events.read_text().replace("Show me the lock code.", "Show me the lock code. " + "x " * 20_000))
    report = run(ref)
    assert report.budget is None
    assert "a2turn0" in report.written


def test_an_unreachable_assistant_model_means_the_offline_summarizer(workspace: Path) -> None:
    (workspace / ".jp" / "config.toml").write_text('[providers.llm.ollama]\nbase_url = "http://127.0.0.1:9"\n')
    ref = pick_conversation(workspace, "17790000000")
    report = run(ref)
    assert report.model == "builtin/extractive"
    assert report.notes[0].startswith("using builtin/extractive: ollama/llama3.2:3b: http://127.0.0.1:9/api/tags")
    assert len(report.written) == 2


def test_nothing_is_rewritten_when_no_request_can_be_made(workspace: Path) -> None:
    (workspace / ".jp" / "config.toml").write_text('[conversation.turn_summary.generate.model]\nid = "anthropic/x"\n')
    ref = pick_conversation(workspace, "17790000000")
    before = {path.name: path.read_bytes() for path in ref.directories[0].iterdir()}
    assert "ANTHROPIC_API_KEY is not set (needed for anthropic/x)" in str(run(ref).error)
    assert {path.name: path.read_bytes() for path in ref.directories[0].iterdir()} == before


def test_a_failing_batch_does_not_stop_the_older_batches(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)
    server.queue.extend([Behaviour(content=lambda body: "{not json"), Behaviour()])
    report = run(ref, cfg=("conversation.turn_summary.generate.batch_size=2",))
    assert [requested_ids(post.body or {}) for post in server.posts()] == [["a2turn0", "a3turn0"], ["a1turn0"]]
    assert set(report.written) == {"a1turn0"}
    assert "not JSON" in str(report.error)


def test_a_turn_too_large_for_the_window_says_so(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    server.context_window = 300
    ref = pick_conversation(workspace, CLEAN)
    report = run(ref)
    assert report.written == {}
    assert report.too_large == {
        str(row["turn"]): f"too large for ollama/llama3.2:3b's window ({row['tokens']} tokens > budget {report.budget})"
        for row in report.plan
    }
    assert len(report.too_large) == 3


@pytest.mark.parametrize("model", ["ollama/llama3.2:3b", "openai/gpt-4o-mini"])
def test_an_answer_cut_off_by_the_token_limit_is_asked_again_with_more_room(
    workspace: Path, server: ModelServer, model: str
) -> None:
    use_model(workspace, server, model)
    ref = pick_conversation(workspace, CLEAN)
    server.queue.append(Behaviour(content=lambda body: '{"summaries": {"a1tu', cut_off=True))
    report = run(ref)
    assert len(report.written) == 3
    first, second = (post.body or {} for post in server.posts())
    if model.startswith("ollama"):
        assert second["options"]["num_predict"] == 2 * first["options"]["num_predict"]
    else:
        assert second["max_completion_tokens"] == 2 * first["max_completion_tokens"]


def test_an_answer_cut_off_twice_is_reported_as_such(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)
    server.queue.extend([Behaviour(content=lambda body: '{"summ', cut_off=True)] * 2)
    report = run(ref)
    assert report.written == {}
    assert "the answer was cut off by the token limit (also with" in str(report.error)
    assert "not JSON" not in str(report.error)


def test_a_turn_whose_answers_fail_three_times_is_not_asked_again_until_it_changes(
    workspace: Path, server: ModelServer
) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)
    blank_for_a1 = Behaviour(
        content=lambda body: json.dumps(
            {"summaries": {i: " " if i == "a1turn0" else f"Summary of {i}" for i in requested_ids(body)}}
        )
    )
    server.queue.extend([blank_for_a1] * 3)
    assert set(run(ref).written) == {"a2turn0", "a3turn0"}
    for _ in range(2):
        assert run(ref).refused == {"a1turn0": "blank"}
    assert len(server.posts()) == 3
    report = run(ref)
    assert len(server.posts()) == 3, "given up: no request"
    assert report.given_up == {"a1turn0": "3 answers failed (blank); not asked again until the turn changes"}
    out = (
        CliRunner()
        .invoke(app, ["--workspace", str(workspace), "turns", CLEAN], obj=Settings(new_id=sequential_ids()))
        .stdout
    )
    assert "[not summarized: 3 answers failed (blank); not asked again until the turn changes]" in out
    retried = run(ref, retry_failed=True)
    assert set(retried.written) == {"a1turn0"}
    assert load_memory(ref) == {}


def test_a_changed_turn_is_asked_again_after_giving_up(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)
    server.queue.extend([Behaviour(content=lambda body: "{not json")] * 3)
    for _ in range(3):
        run(ref)
    assert set(run(ref).given_up) == {"a1turn0", "a2turn0", "a3turn0"}
    events_path = ref.directories[0] / "events.json"
    events_path.write_text(events_path.read_text().replace("Show me the lock code.", "Show me the locking code."))
    report = run(ref)
    assert set(report.written) == {"a2turn0"}


def test_a_lock_taken_between_the_answer_and_the_write_back_writes_nothing(
    workspace: Path, server: ModelServer
) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)
    holders = []

    def answer_then_lock(body: dict[str, Any]) -> str:
        holders.append(hold(lock_path(ref)))
        return json.dumps({"summaries": {i: f"Summary of {i}" for i in requested_ids(body)}})

    server.queue.append(Behaviour(content=answer_then_lock))
    events = ref.directories[0] / "events.json"
    before = events.read_bytes()
    try:
        report = run(ref)
    finally:
        for holder in holders:
            release(holder)
    assert report.written == {}
    assert report.locked
    assert "results not written" in str(report.skipped)
    assert events.read_bytes() == before


def counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Count the calls a catch-up makes to one of the storage functions it imports (in each of its modules)."""
    from turnmark.shell.usecases import summarize, summary_session, summary_writer

    calls: list[int] = []
    users = [module for module in (summarize, summary_session, summary_writer) if hasattr(module, name)]
    assert users, f"no catch-up module imports {name}"
    real = getattr(users[0], name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    for module in users:
        monkeypatch.setattr(module, name, counted)
    return calls


ONE_PER_BATCH = ("conversation.turn_summary.generate.batch_size=1",)


def test_a_models_answers_are_written_together_until_they_have_waited(
    workspace: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three batches answered before the first answer waited long enough make one save; one parse."""
    use_model(workspace, server)
    monkeypatch.setattr("turnmark.shell.usecases.summarize.write_due", lambda waited, last_save: False)
    saves, reads = counting(monkeypatch, "save_stream"), counting(monkeypatch, "read_conversation")
    report = run(pick_conversation(workspace, CLEAN), cfg=ONE_PER_BATCH)
    assert len(server.posts()) == 3
    assert len(report.written) == 3
    assert (len(saves), len(reads)) == (1, 1)


@pytest.mark.parametrize(("conversation", "turns"), [(CLEAN, 3), ("17790000000", 2)], ids=["current", "legacy"])
def test_answers_that_waited_are_written_without_reading_the_unchanged_conversation_again(
    workspace: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch, conversation: str, turns: int
) -> None:
    """Every answer waits past the write interval: one save per batch, each into the stream in memory,
    writing what one save at the end would have written (a legacy conversation upgraded by the first)."""
    use_model(workspace, server)
    ref = pick_conversation(workspace, conversation)
    folder = ref.directories[0]
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    monkeypatch.setattr("turnmark.shell.usecases.summarize.write_due", lambda waited, last_save: False)
    run(ref, cfg=ONE_PER_BATCH)
    together = {path.name: path.read_bytes() for path in folder.iterdir()}
    for path in folder.iterdir():
        path.unlink()
    for name, data in before.items():
        (folder / name).write_bytes(data)
    monkeypatch.setattr("turnmark.shell.usecases.summarize.write_due", lambda waited, last_save: True)
    saves, reads = counting(monkeypatch, "save_stream"), counting(monkeypatch, "read_conversation")
    report = run(ref, cfg=ONE_PER_BATCH)
    assert len(report.written) == turns
    assert (len(saves), len(reads)) == (turns, 1)
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == together


@pytest.mark.parametrize(
    ("changed", "coarse_clock"), [("Show me the locking code.", False), ("Show me the lock tool.", True)]
)
def test_a_write_by_another_process_between_two_saves_is_kept(
    workspace: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch, changed: str, coarse_clock: bool
) -> None:
    """The second save finds other files than its first wrote: it reads them again and writes by fingerprint.
    With a clock too coarse to show a same-size rewrite in place (the identity never changes), files changed
    so recently are compared by their bytes."""
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)
    events = ref.directories[0] / "events.json"
    edit = edit_while_answering(events, "Show me the lock code.", changed)
    server.queue.extend([Behaviour(), Behaviour(content=edit)])
    monkeypatch.setattr("turnmark.shell.usecases.summarize.write_due", lambda waited, last_save: True)
    if coarse_clock:
        first_seen: dict[str, object] = {}
        real = workspace_cache.file_identity
        monkeypatch.setattr(
            "turnmark.shell.usecases.catchup_files.file_identity", lambda path: first_seen.setdefault(path, real(path))
        )
    reads = counting(monkeypatch, "read_conversation")
    report = run(ref, cfg=ONE_PER_BATCH)
    assert len(reads) == 2
    assert changed in events.read_text(), "the other process's edit is kept"
    assert set(report.written) | set(report.dropped) == {"a1turn0", "a2turn0", "a3turn0"}
    assert summaries(ref)["a3turn0"] == ("Summary of a3turn0", "ollama/llama3.2:3b"), "the first save stays"


def test_ctrl_c_writes_the_answers_received_before_it(workspace: Path, server: ModelServer) -> None:
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)

    def interrupt_the_third(done: int, total: int) -> None:
        if done == 2 and total == 3:
            raise KeyboardInterrupt

    options = CatchupOptions(environ={}, http=FAST, cfg=ONE_PER_BATCH)
    with pytest.raises(KeyboardInterrupt):
        catch_up(ref, options, sequential_ids("n"), on_batch=interrupt_the_third)
    assert len(server.posts()) == 2
    state = summaries(ref)
    assert [state[turn][0] for turn in ("a1turn0", "a2turn0", "a3turn0")] == [
        None,
        "Summary of a2turn0",
        "Summary of a3turn0",
    ]


def test_a_catch_up_leaves_the_cycle_collector_on(workspace: Path) -> None:
    import gc

    run(pick_conversation(workspace, CLEAN), model="builtin/extractive")
    assert gc.isenabled()


@pytest.mark.parametrize("dry_run", [False, True], ids=["run", "dry-run"])
def test_a_catch_up_leaves_no_connection_open(workspace: Path, server: ModelServer, dry_run: bool) -> None:
    """The provider's client is closed when its catch-up ends (a long-lived ``watch`` opens one a catch-up): with
    the cyclic collector off, which alone let go of it before, the server sees every connection closed, after the
    summaries were asked (or, in a dry run, the context window)."""
    use_model(workspace, server)
    ref = pick_conversation(workspace, CLEAN)
    gc.disable()
    try:
        report = run(ref, dry_run=dry_run)
        assert report.error is None
        assert bool(server.posts()) is not dry_run
        assert server.received, "the server was asked"
        assert server.open_connections() == 0
    finally:
        gc.enable()

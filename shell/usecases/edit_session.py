"""``turnmark edit -i``: D21's editor session around the pure plan in ``core/edit_plan.py``.

1. The newest turn without a summary gets one first (RFD 126 consumer
   contract), from the configured summary model or the offline summarizer,
   bounded by the model's timeout; a failure leaves the fallback shown.
2. JP's lock is taken for the whole session (refused at once when held).
3. The plan and the event files go to a temporary directory, and the editor
   (``JP_EDITOR``, ``VISUAL``, ``EDITOR``, as JP chooses) opens it; an editor
   that cannot open a directory gets ``CONVERSATION`` and a note on where the
   files are.
4. On exit: a non-zero status or an empty plan aborts; errors are written at
   the top of the plan and the editor reopens; otherwise the conversation is
   saved (after keeping an undo copy), unless nothing changed.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from returns.result import Failure

from turnmark.core.editing.edit_plan import PLAN_NAME, EditSession, annotate, rebuild, render_session
from turnmark.core.links.check import check_report
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import IdSource
from turnmark.core.text.wording import counted
from turnmark.shell.clock import now_timestamp
from turnmark.shell.errors import ConversationError, EditAborted, FileFault
from turnmark.shell.settings import RunSettings
from turnmark.shell.storage.conversations import hold_lock, read_conversation, refuse_unsavable, save_stream
from turnmark.shell.storage.files import EVENTS_LIMIT, PLAN_LIMIT, read_file
from turnmark.shell.storage.undo import saved_with_undo
from turnmark.shell.storage.workspace import ConversationRef
from turnmark.shell.usecases.summarize import CatchupOptions, catch_up

NO_DIRECTORY_EDITORS = frozenset({"nano", "pico", "ed", "vi", "ex", "mcedit", "joe"})
MAX_ROUNDS = 20


@dataclass(frozen=True, kw_only=True)
class EditOptions(RunSettings):
    summarize_first: bool = True


def editor_command(environ: Mapping[str, str]) -> list[str]:
    """JP's editor chain: ``JP_EDITOR``, ``VISUAL``, ``EDITOR``, else ``vi``."""
    for name in ("JP_EDITOR", "VISUAL", "EDITOR"):
        value = (environ.get(name) or "").strip()
        if value:
            return shlex.split(value)
    return ["vi"]


def summarize_newest(ref: ConversationRef, options: EditOptions, new_id: IdSource, note: Callable[[str], None]) -> None:
    """The newest turn lacking a summary gets one now (one batch of one turn); a failure only leaves the fallback."""
    cfg = (*options.cfg, "conversation.turn_summary.generate.batch_size=1")
    quick = replace(options.http, retries=0, connect_retries=0)
    report = catch_up(ref, CatchupOptions(cfg=cfg, environ=options.environ, http=quick, max_batches=1), new_id)
    for turn_id, text in report.written.items():
        note(f"summarized {turn_id}: {text}")
    if report.error:
        note(f"no summary for the newest turn ({report.error}); its fallback is shown")


def _write(path: Path, text: str) -> None:
    """Write a file of the edit folder as bytes (no newline translation), never through a link left there."""
    path.unlink(missing_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _write_directory(directory: Path, session: EditSession, plan: str) -> None:
    _write(directory / PLAN_NAME, plan)
    for name, text in session.files.items():
        _write(directory / name, text)


def _read(path: Path, limit: int) -> str:
    """A file of the edit folder; one that is too large (or was swapped for a link) aborts the session."""
    try:
        data = read_file(path, limit, follow_links=False)
    except FileFault as fault:
        raise EditAborted(f"{fault}; nothing written") from None
    return (data or b"").decode("utf-8", errors="replace")


def _read_directory(directory: Path) -> tuple[str, dict[str, str]]:
    plan_path = directory / PLAN_NAME
    plan = _read(plan_path, PLAN_LIMIT) if plan_path.is_file() and not plan_path.is_symlink() else ""
    files = {
        path.name: _read(path, EVENTS_LIMIT)
        for path in directory.iterdir()
        if path.is_file() and not path.is_symlink() and path.name != PLAN_NAME
    }
    return plan, files


def _run_editor(command: list[str], directory: Path, note: Callable[[str], None]) -> None:
    program = Path(command[0]).name
    target = directory
    if program in NO_DIRECTORY_EDITORS:
        target = directory / PLAN_NAME
        note(f"{program} cannot open a folder: editing the plan; the event files are in {directory}")
    try:
        status = subprocess.run([*command, str(target)], check=False).returncode
    except OSError as error:
        raise ConversationError(f"cannot run the editor {command[0]!r}: {error.strerror or error}") from None
    if status != 0:
        raise EditAborted(f"the editor exited with status {status}; nothing written")


def edit_interactively(
    ref: ConversationRef, options: EditOptions, new_id: IdSource, note: Callable[[str], None]
) -> str:
    """Run the whole session; a one-line result (``EditAborted`` or ``ConversationError`` otherwise)."""
    if options.summarize_first:
        summarize_newest(ref, options, new_id, note)
    environ = os.environ if options.environ is None else options.environ
    command = editor_command(environ)
    try:
        return _session(ref, command, new_id, note)
    except OSError as error:
        raise ConversationError(f"{ref.display_id}: the edit folder failed: {error.strerror or error}") from None


def _session(ref: ConversationRef, command: list[str], new_id: IdSource, note: Callable[[str], None]) -> str:
    with hold_lock(ref) as lock, tempfile.TemporaryDirectory(prefix=f"turnmark-edit-{ref.id}-") as scratch:
        loaded = read_conversation(ref, new_id, lock)
        refuse_unsavable(loaded, loaded.stream)
        session = render_session(loaded.stream)
        directory = Path(scratch)
        _write_directory(directory, session, session.plan)
        for _ in range(MAX_ROUNDS):
            _run_editor(command, directory, note)
            plan, files = _read_directory(directory)
            now = now_timestamp()
            result = rebuild(loaded.stream, session, plan, files, now)
            if isinstance(result, Failure):
                _write(directory / PLAN_NAME, annotate(plan, result.failure()))
                note(f"{len(result.failure())} problem(s) written at the top of {PLAN_NAME}; reopening the editor")
                continue
            edited = result.unwrap()
            if edited is None:
                raise EditAborted("the plan is empty; nothing written")
            if edited is loaded.stream:
                return f"{ref.display_id}: nothing changed; nothing written"
            saved_with_undo(loaded, partial(save_stream, lock, loaded, edited))
            _report_links(edited, note)
            saved = counted(len(edited.turns()), "turn")
            return f"{ref.display_id}: saved ({saved}); `turnmark edit --undo {ref.display_id}` takes it back"
    raise EditAborted(f"still invalid after {MAX_ROUNDS} rounds; nothing written")


def _report_links(stream: ConversationStream, note: Callable[[str], None]) -> None:
    report = check_report(stream)
    for item in report.unresolved:
        note(
            f"entry {item['index']} ({item['type']} {item['event_id']}): request_id {item['request_id']!r} does not "
            f"resolve ({item['reason']}); `turnmark project` leaves it out of what the model sees "
            "(`turnmark repair` can fix it)"
        )

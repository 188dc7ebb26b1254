"""``turnmark edit -i``: D21's editor session around the pure plan in ``core/editing/edit_plan.py``.

0. A conversation whose answers carry no request link (written before JP linked them) cannot show a request
   deleted or moved in the edit; ``offer`` is asked whether to link them first, as ``repair --backfill
   --apply`` does (its own undo step, saved before anything else).
1. The newest turn without a summary gets one first (RFD 126 consumer contract), from the
   configured summary model or the offline summarizer, bounded by the model's timeout; a
   failure leaves the fallback shown. What it writes is its own undo step, and the session's
   result says it was written even when the edit is aborted or changes nothing.
2. JP's lock is taken for the whole session (refused at once when held).
3. The plan and the event files go to a new private folder, ``turnmark-edit-<pid>-<conversation>-…``
   in the temporary directory (folders whose process is gone are removed first). The editor
   (``JP_EDITOR``, ``VISUAL``, ``EDITOR``, as JP chooses) opens the plan, with the folder as its
   working directory (``gf`` in vim opens an event file); editors made to open a project folder
   (``FOLDER_EDITORS``) get the folder and the plan, and ``--wait``.
4. On exit: a non-zero status or an empty plan aborts; errors are written at the top of the
   plan and the editor reopens; an edit that drops entries no deleted line stood for (a
   compaction overlay whose turns no longer lie together) names them and asks ``confirm``;
   the conversation is saved (after keeping an undo step) only while the folder is still the
   one turnmark made, unless nothing changed.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from returns.result import Failure

from turnmark.core.editing.edit_plan import (
    PLAN_NAME,
    Dropped,
    EditChanges,
    EditSession,
    annotate,
    dropped_unsaid,
    edit_changes,
    rebuild,
    render_session,
)
from turnmark.core.editing.repair import Backfill, apply_repairs, backfill_offer
from turnmark.core.links.check import check_report
from turnmark.core.stream.event_ids import IdSource
from turnmark.core.stream.legacy_upgrade import LegacyUpgrade
from turnmark.core.text.wording import counted
from turnmark.shell.clock import now_epoch, now_timestamp
from turnmark.shell.errors import ConversationError, EditAborted, FileFault
from turnmark.shell.settings import RunSettings
from turnmark.shell.storage.conversations import (
    LoadedConversation,
    read_conversation,
    refuse_unsavable,
    save_stream,
)
from turnmark.shell.storage.files import EVENTS_LIMIT, PLAN_LIMIT, os_reason, process_gone, read_file, remove_abandoned
from turnmark.shell.storage.locking import ConversationLock, hold_lock
from turnmark.shell.storage.undo import saved_with_undo
from turnmark.shell.storage.workspace import ConversationRef
from turnmark.shell.usecases.catchup_report import CatchupOptions
from turnmark.shell.usecases.summarize import catch_up

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream

FOLDER_EDITORS = frozenset(
    {
        *("code", "code-insiders", "codium", "cursor", "subl", "sublime_text", "zed", "zeditor"),
        *("idea", "pycharm", "webstorm", "goland", "clion", "rider", "phpstorm", "rubymine", "rustrover"),
    }
)
"""Editors made to open a project folder: they get the edit folder and the plan (and ``--wait``)."""
WAIT_FLAGS = frozenset({"--wait", "-w"})
MAX_ROUNDS = 20
FOLDER_PREFIX = "turnmark-edit-"
OLD_FOLDER_SECONDS = 24 * 3600
"""An edit folder named without a process ID (an older turnmark's) is removed when this old."""
SUMMARY_STEP = "edit -i's summary of the newest turn"
BACKFILL_STEP = "edit -i's request links (backfill)"

Outcome = Literal["saved", "unchanged", "aborted", "invalid"]
Decision = Literal["save", "edit", "abort", "refuse"]
Confirm = Callable[[tuple[Dropped, ...]], Decision]
"""Asked when an edit drops entries no deleted line stood for: save, edit the plan again, abort, or refuse
(no one to ask, and ``--yes`` not given)."""
OfferBackfill = Callable[[Backfill], bool]
"""Asked, before the plan opens, whether to link the answers that carry no request link first."""


def never_backfill(offer: Backfill) -> bool:
    """The offer declined (a fork, which is new, or a caller that asks no one)."""
    return False


@dataclass(frozen=True, kw_only=True)
class EditOptions(RunSettings):
    summarize_first: bool = True


@dataclass(frozen=True)
class EditResult:
    """What a session did: ``outcome`` is one of four values, ``message`` the line that says it."""

    conversation: str
    outcome: Outcome
    message: str
    turns: int | None = None
    dropped: tuple[Dropped, ...] = ()
    summarized: dict[str, str] = field(default_factory=dict)
    """Summaries saved before the editor opened (their own undo step), by turn ID."""
    upgrade: LegacyUpgrade | None = None
    """The upgrade from JP's older format a save of the session performed (the summary's or the edit's)."""
    changes: EditChanges | None = None
    """What the saved edit dropped, added and cleared."""
    backfilled: int = 0
    """Answers linked to their requests before the plan opened (their own undo step)."""

    def to_json(self) -> dict[str, object]:
        return {
            "conversation": self.conversation,
            "action": "edit",
            "outcome": self.outcome,
            "message": self.message,
            "turns": self.turns,
            "dropped": [dropped.to_json() for dropped in self.dropped],
            "summarized": self.summarized,
            "upgraded": self.upgrade is not None,
            "upgrade": None if self.upgrade is None else self.upgrade.to_json(),
            "changes": None if self.changes is None else self.changes.to_json(),
            "backfilled": self.backfilled,
        }


def editor_command(environ: Mapping[str, str]) -> list[str]:
    """JP's editor chain: ``JP_EDITOR``, ``VISUAL``, ``EDITOR``, else ``vi``."""
    for name in ("JP_EDITOR", "VISUAL", "EDITOR"):
        value = (environ.get(name) or "").strip()
        if value:
            return shlex.split(value)
    return ["vi"]


def editor_arguments(command: list[str], folder: Path) -> list[str]:
    """The editor's command line: the plan, or for a folder editor ``--wait``, the folder and the plan."""
    plan = str(folder / PLAN_NAME)
    program = Path(command[0]).name.lower().removesuffix(".exe").removesuffix(".sh").removesuffix(".cmd")
    if program.removesuffix("64") in FOLDER_EDITORS:
        wait = [] if WAIT_FLAGS & set(command[1:]) else ["--wait"]
        return [*command, *wait, str(folder), plan]
    return [*command, plan]


def backfill_first(
    ref: ConversationRef, new_id: IdSource, note: Callable[[str], None], offer: OfferBackfill
) -> tuple[int, LegacyUpgrade | None]:
    """Link the answers that carry no request link (one-request turns) when ``offer`` accepts, as its own undo
    step; how many were linked, and the upgrade from JP's older format the save performed."""
    planned = backfill_offer(read_conversation(ref, new_id).stream)
    if not planned.fixes or not offer(planned):
        return 0, None
    with hold_lock(ref) as lock:
        loaded = read_conversation(ref, new_id, lock)
        refuse_unsavable(loaded, loaded.stream)
        fixes = backfill_offer(loaded.stream).fixes
        if not fixes:
            return 0, None
        repaired = apply_repairs(loaded.stream, fixes)
        saved = saved_with_undo(loaded, partial(save_stream, lock, loaded, repaired), BACKFILL_STEP)
    linked = counted(len(fixes), "answer")
    note(f"linked {linked} to their turns' requests (its own undo step): a request this edit deletes will show")
    return len(fixes), saved.upgrade


def summarize_newest(
    ref: ConversationRef, options: EditOptions, new_id: IdSource, note: Callable[[str], None]
) -> tuple[dict[str, str], LegacyUpgrade | None]:
    """The newest turn lacking a summary gets one now (one batch of one turn, its own undo step); what was
    written, by turn ID, and the upgrade from JP's older format its save performed. A failure only leaves the
    fallback."""
    cfg = (*options.cfg, "conversation.turn_summary.generate.batch_size=1")
    quick = replace(options.http, retries=0, connect_retries=0)
    catchup = CatchupOptions(cfg=cfg, environ=options.environ, http=quick, max_batches=1, undo_as=SUMMARY_STEP)
    report = catch_up(ref, catchup, new_id)
    for turn_id, text in report.written.items():
        note(f"summarized {turn_id}: {text}")
    if report.error:
        note(f"no summary for the newest turn ({report.error}); its fallback is shown")
    return dict(report.written), report.upgrade if report.upgraded else None


def _abandoned(name: str, mtime: float) -> bool:
    """An edit folder whose process is gone (one an older turnmark named without it: a day old)."""
    gone = process_gone(name.removeprefix(FOLDER_PREFIX).split("-", 1)[0])
    return now_epoch() - mtime > OLD_FOLDER_SECONDS if gone is None else gone


class EditFolder:
    """The private folder of one session, known by its device and inode: written and removed through its
    descriptor, and no longer trusted once its name leads elsewhere (an editor replaced it by a link)."""

    def __init__(self, parent: Path, conversation: int) -> None:
        remove_abandoned(parent, parent, FOLDER_PREFIX, _abandoned)
        self.path = Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-{conversation}-", dir=parent))
        self.fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        status = os.fstat(self.fd)
        self.identity = (status.st_dev, status.st_ino)

    @property
    def replaced(self) -> bool:
        try:
            status = os.lstat(self.path)
        except OSError:
            return True
        return not stat.S_ISDIR(status.st_mode) or (status.st_dev, status.st_ino) != self.identity

    def ensure_ours(self) -> None:
        """Abort when the folder's name no longer leads to the folder turnmark made."""
        if self.replaced:
            raise EditAborted(
                f"the edit folder {self.path} was replaced (by a link or another folder) while the editor was open"
            )

    def write(self, name: str, text: str) -> None:
        """A file of the folder, as bytes (no newline translation), never through a link left there."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=self.fd)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with os.fdopen(os.open(name, flags, 0o600, dir_fd=self.fd), "wb") as handle:
            handle.write(text.encode("utf-8"))

    def read(self) -> tuple[str, dict[str, str]]:
        """The plan and the event files, once the folder is known to be the one turnmark made."""
        self.ensure_ours()
        plan_path = self.path / PLAN_NAME
        plan = _read(plan_path, PLAN_LIMIT) if plan_path.is_file() and not plan_path.is_symlink() else ""
        files = {
            path.name: _read(path, EVENTS_LIMIT)
            for path in self.path.iterdir()
            if path.is_file() and not path.is_symlink() and path.name != PLAN_NAME
        }
        return plan, files

    def remove(self) -> None:
        """Remove the folder; when its name leads elsewhere now, only empty the folder turnmark made."""
        try:
            if not self.replaced:
                shutil.rmtree(self.path, ignore_errors=True)
                return
            for name in os.listdir(self.fd):
                with contextlib.suppress(OSError):
                    if stat.S_ISDIR(os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_mode):
                        shutil.rmtree(name, ignore_errors=True, dir_fd=self.fd)
                    else:
                        os.unlink(name, dir_fd=self.fd)
        finally:
            os.close(self.fd)


def _read(path: Path, limit: int) -> str:
    """A file of the edit folder; one that is too large (or was swapped for a link) aborts the session."""
    try:
        data = read_file(path, limit, follow_links=False)
    except FileFault as fault:
        raise EditAborted(str(fault)) from None
    return (data or b"").decode("utf-8", errors="replace")


def _run_editor(command: list[str], folder: Path) -> None:
    try:
        status = subprocess.run(editor_arguments(command, folder), cwd=folder, check=False).returncode
    except OSError as error:
        raise ConversationError(f"cannot run the editor {command[0]!r}: {os_reason(error)}") from None
    if status != 0:
        raise EditAborted(f"the editor exited with status {status}")


def edit_interactively(
    ref: ConversationRef,
    options: EditOptions,
    new_id: IdSource,
    note: Callable[[str], None],
    confirm: Confirm,
    *,
    offer: OfferBackfill = never_backfill,
) -> EditResult:
    """Run the whole session (``ConversationError`` when it cannot: locked, unreadable, a failed save)."""
    backfilled, linked_upgrade = backfill_first(ref, new_id, note, offer)
    summarized, upgrade = summarize_newest(ref, options, new_id, note) if options.summarize_first else ({}, None)
    environ = os.environ if options.environ is None else options.environ
    parent = Path(environ.get("TMPDIR") or tempfile.gettempdir())
    try:
        result = _session(ref, editor_command(environ), parent=parent, new_id=new_id, note=note, confirm=confirm)
    except EditAborted as error:
        result = EditResult(ref.display_id, "aborted", str(error))
    except OSError as error:
        raise ConversationError(f"{ref.display_id}: the edit folder failed: {os_reason(error)}") from None
    return _told(replace(result, backfilled=backfilled), summarized, linked_upgrade or upgrade)


def _told(result: EditResult, summarized: dict[str, str], upgrade: LegacyUpgrade | None = None) -> EditResult:
    """The result's message ending on what was written: nothing, or only what was saved first (the request
    links, the newest turn's summary; and the upgrade from JP's older format a save performed)."""
    upgrade = upgrade or result.upgrade
    upgraded = "" if upgrade is None else f"; upgraded from JP's older format ({upgrade.describe()})"
    if result.outcome == "saved":
        return replace(result, message=result.message + upgraded, summarized=summarized, upgrade=upgrade)
    first = [
        what
        for what, done in (
            (f"the request links of {counted(result.backfilled, 'answer')}", result.backfilled),
            ("the newest turn's summary", summarized),
        )
        if done
    ]
    if not first:
        return replace(result, message=f"{result.message}; nothing written")
    removes = "them, one per run" if len(first) > 1 else "them" if result.backfilled else "it"
    undo = f"`turnmark edit --undo {result.conversation}` removes {removes}"
    were = "were" if len(first) > 1 or result.backfilled else "was"
    said = f"{result.message}; the edit wrote nothing, but {' and '.join(first)} {were} saved before the editor opened"
    return replace(result, message=f"{said}{upgraded} ({undo})", summarized=summarized, upgrade=upgrade)


def _session(
    ref: ConversationRef,
    command: list[str],
    *,
    parent: Path,
    new_id: IdSource,
    note: Callable[[str], None],
    confirm: Confirm,
) -> EditResult:
    with hold_lock(ref) as lock:
        loaded = read_conversation(ref, new_id, lock)
        refuse_unsavable(loaded, loaded.stream)
        session = render_session(loaded.stream)
        folder = EditFolder(parent, ref.id)
        try:
            folder.write(PLAN_NAME, session.plan)
            for name, text in session.files.items():
                folder.write(name, text)
            return _rounds(loaded, lock, session=session, folder=folder, command=command, note=note, confirm=confirm)
        finally:
            folder.remove()


def _rounds(
    loaded: LoadedConversation,
    lock: ConversationLock,
    *,
    session: EditSession,
    folder: EditFolder,
    command: list[str],
    note: Callable[[str], None],
    confirm: Confirm,
) -> EditResult:
    name = loaded.ref.display_id
    for _ in range(MAX_ROUNDS):
        _run_editor(command, folder.path)
        plan, files = folder.read()
        result = rebuild(loaded.stream, session, plan, files, now_timestamp())
        if isinstance(result, Failure):
            folder.write(PLAN_NAME, annotate(plan, result.failure()))
            note(f"{len(result.failure())} problem(s) written at the top of {PLAN_NAME}; reopening the editor")
            continue
        edited = result.unwrap()
        if edited is None:
            return EditResult(name, "aborted", "the plan is empty")
        if edited is loaded.stream:
            return EditResult(name, "unchanged", f"{name}: nothing changed")
        dropped = dropped_unsaid(loaded.stream, session, plan, edited)
        for entry in dropped:
            note(f"also dropped, though no line of it was deleted: {entry.line}")
        decision = confirm(dropped) if dropped else "save"
        if decision == "edit":
            continue
        if decision != "save":
            why = "give --yes to save it anyway" if decision == "refuse" else "not confirmed"
            what = counted(len(dropped), "entry", "entries")
            return EditResult(
                name, "aborted", f"the edit drops {what} no deleted line stood for ({why})", None, dropped
            )
        folder.ensure_ours()
        saved = saved_with_undo(loaded, partial(save_stream, lock, loaded, edited), "edit -i")
        _report_links(edited, note)
        turns = len(edited.turns())
        changes = edit_changes(loaded.stream, edited)
        what = "; ".join(part for part in (counted(turns, "turn"), changes.describe()) if part)
        message = f"{name}: saved ({what}); `turnmark edit --undo {name}` takes it back"
        return EditResult(name, "saved", message, turns, dropped, upgrade=saved.upgrade, changes=changes)
    return EditResult(name, "invalid", f"still invalid after {MAX_ROUNDS} rounds")


def _report_links(stream: ConversationStream, note: Callable[[str], None]) -> None:
    report = check_report(stream)
    for item in report.unresolved:
        note(
            f"entry {item['index']} ({item['type']} {item['event_id']}): request_id {item['request_id']!r} does not "
            f"resolve ({item['reason']}); `turnmark project` leaves it out of what the model sees "
            "(`turnmark repair` can fix it)"
        )

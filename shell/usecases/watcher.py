"""``turnmark watch``: keep every conversation of some workspaces summarized as they change.

Filesystem events are only a trigger: each change marks its conversation
dirty, and once no change has arrived for the settle period the whole
conversation is rescanned and caught up in one pass, so a burst of writes
makes one catch-up and coalesced or dropped events lose nothing (JP's saves
arrive as a rename of ``events.json.tmp``); after it, ``find``'s index (when there is
one) takes the conversation's changed turns. A turn is complete when a
later turn starts, or, for the last turn, when the conversation is not
locked, the turn ends with an answer and no pending tool call, and nothing
changed for the settle period. A locked conversation is retried later, a
failing model backs off, one broken conversation never stops the service,
and turnmark's own writes do not start another round.
"""

from __future__ import annotations

import errno
import os
import signal
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserverVFS

from turnmark.core.search.freshness import FileIdentity
from turnmark.core.stream.conversation_ids import id_from_dirname
from turnmark.core.stream.event_ids import IdSource
from turnmark.core.summaries.schedule import Action, Step, after_exception, next_step, report_notices
from turnmark.core.text.wording import counted
from turnmark.shell.clock import monotonic, now_epoch
from turnmark.shell.storage.config_files import config_files
from turnmark.shell.storage.conversations import EventsStamp, events_stamp
from turnmark.shell.storage.workspace import ConversationRef, Workspace, find_workspace, list_conversations
from turnmark.shell.storage.workspace_cache import file_identity
from turnmark.shell.usecases.catchup_report import CatchupOptions, CatchupReport, CatchupRun
from turnmark.shell.usecases.finding import refresh_conversation
from turnmark.shell.usecases.listing import settled
from turnmark.shell.usecases.summarize import catch_up

CHANGES = frozenset({"created", "modified", "moved", "deleted", "closed"})
SILO_RECHECK = 2.0
CONFIG_RECHECK = 1.0
"""Seconds between two looks at the configuration files while conversations wait for them to change."""


@dataclass(frozen=True)
class WatchEvent:
    """One action of the watcher: a line on stderr, or one JSON object per line with ``--format json``."""

    event: str
    message: str
    conversation: str | None = None
    details: Mapping[str, object] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.conversation}: {self.message}" if self.conversation else self.message

    def as_json(self) -> dict[str, object]:
        return {"event": self.event, "conversation": self.conversation, "message": self.message, **self.details}


@dataclass
class WatchOptions:
    settle: float = 5.0
    once: bool = False
    catchup: CatchupOptions = field(default_factory=CatchupOptions)
    jobs: int | None = None
    """Processes that read what the workspace cache lacks at start (``--jobs``; ``None``: one per core)."""


@dataclass
class _State:
    last_change: float
    due: float
    backoff: float = 0.0


class Watcher:
    """The service loop; ``run()`` blocks until ``stop()`` (or a signal), ``run_once()`` does one pass."""

    def __init__(
        self,
        workspaces: list[Workspace],
        options: WatchOptions,
        new_id: IdSource,
        log: Callable[[WatchEvent], None],
        clock: Callable[[], float] = monotonic,
    ) -> None:
        self.workspaces = list(workspaces)
        self.options = options
        self.new_id = new_id
        self.log = log
        self.clock = clock
        self.catchups: Counter[int] = Counter()
        self.not_done: set[int] = set()
        """Conversations a catch-up failed or skipped (``--once`` exits 1 when there are any)."""
        self._run = CatchupRun()
        """Catch-ups started, by conversation ID."""
        self._states: dict[int, _State] = {}
        self._refs: dict[int, ConversationRef] = {}
        self._written: dict[int, EventsStamp] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._config_waits: set[int] = set()
        """Conversations whose model the configuration makes unusable, looked at again when it changes."""
        self._config_said: set[str] = set()
        self._config_stamp = self._config_files()
        self._hup = threading.Event()
        self._config_checked = 0.0

    # Events -> dirty conversations ------------------------------------------------------------------

    def roots(self) -> list[Path]:
        """Where conversations live: each workspace's and JP's user-local copies (existing or not yet)."""
        found = [workspace.conversations_dir for workspace in self.workspaces]
        found += [w.user_silo / "conversations" for w in self.workspaces if w.user_silo is not None]
        return found

    def watched(self) -> list[Path]:
        """The folders given to the observer: each workspace's ``.jp`` (so a ``conversations`` folder
        created later is seen) and the user-local silo."""
        found = [workspace.storage for workspace in self.workspaces]
        found += [w.user_silo for w in self.workspaces if w.user_silo is not None]
        return [root for root in found if root.is_dir()]

    def touched(self, path: str) -> None:
        """A filesystem event for ``path``: mark its conversation dirty (unknown paths are ignored)."""
        for root in self.roots():
            try:
                relative = Path(path).relative_to(root)
            except ValueError:
                continue
            if not relative.parts or relative.parts[0].startswith("."):
                return
            conversation_id = id_from_dirname(relative.parts[0])
            if conversation_id is not None:
                self._mark(conversation_id)
            return

    def _mark(self, conversation_id: int, age: float = 0.0) -> None:
        """The conversation changed ``age`` seconds ago: look at it once it has rested for the settle period."""
        changed = self.clock() - age
        due = changed + self.options.settle
        with self._lock:
            state = self._states.get(conversation_id)
            if state is None:
                self._states[conversation_id] = _State(changed, due)
            elif changed >= state.last_change:
                state.last_change = changed
                state.due = max(state.due, due)

    # Processing -------------------------------------------------------------------------------------

    def _refresh_refs(self) -> None:
        refs: dict[int, ConversationRef] = {}
        for workspace in self.workspaces:
            for ref in list_conversations(workspace):
                refs[ref.id] = ref
        self._refs = refs

    def _due(self) -> list[int]:
        now = self.clock()
        with self._lock:
            return sorted(cid for cid, state in self._states.items() if state.due <= now)

    def _process(self, conversation_id: int, *, now_settled: bool = False) -> None:
        """Catch one conversation up; ``now_settled``: every turn counts as settled (a ``--once`` pass),
        else the last only once the files as read have rested for the settle period."""
        ref = self._refs.get(conversation_id)
        if ref is None:
            self._refresh_refs()
            ref = self._refs.get(conversation_id)
        state = self._states[conversation_id]
        if ref is not None and None in events_stamp(ref):
            self._refresh_refs()  # JP renames a folder when it sets a title
            ref = self._refs.get(conversation_id)
        if ref is None:
            del self._states[conversation_id]
            return
        if conversation_id in self._written and events_stamp(ref) == self._written[conversation_id]:
            self._forget(conversation_id, state)
            return
        settled = self.clock() - state.last_change >= self.options.settle
        settle_for = None if now_settled else self.options.settle
        options = replace(self.options.catchup, last_turn_open=not settled, settled_for=settle_for, saved_by="watch")
        self.catchups[conversation_id] += 1
        try:
            report = catch_up(ref, options, self.new_id, should_stop=self._stop.is_set, run=self._run)
        except Exception as error:  # one broken conversation never stops the service
            self._perform(conversation_id, ref, state, after_exception(str(error), state.backoff))
            return
        self._log_report(ref, report)
        problem = refresh_conversation(ref)
        if problem:
            self._say("index", ref, problem)
        if report.unsettled is not None:
            self._mark(conversation_id, self.options.settle - report.unsettled)
            settled = False
        if report.done:
            self.not_done.discard(conversation_id)
        else:
            self.not_done.add(conversation_id)
        step = next_step(
            error=report.error,
            conversation_problem=report.conversation_problem,
            skipped=report.skipped,
            locked=report.locked,
            repeated=report.repeated or (report.config_problem and report.error in self._config_said),
            config_problem=report.config_problem,
            written=bool(report.written),
            settled=settled,
            backoff=state.backoff,
            once=self.options.once,
            last_change=state.last_change,
            settle=self.options.settle,
            now=self.clock(),
        )
        self._perform(conversation_id, ref, state, step, report.last_write)

    def _perform(
        self, conversation_id: int, ref: ConversationRef, state: _State, step: Step, stamp: EventsStamp | None = None
    ) -> None:
        """Log what ``step`` says, keep its back-off and remember turnmark's own write, then reschedule or forget."""
        for notice in step.notices:
            self._say(notice.event, ref, notice.message, **notice.details)
        state.backoff = step.backoff
        if step.remember_written and stamp is not None:
            self._written[conversation_id] = stamp
        if step.action is Action.GIVE_UP:
            self._forget(conversation_id, state)
        elif step.action is Action.FORGET:
            self._forget(conversation_id, state, unless_changed=True)
        elif step.action is Action.WAIT_FOR_CONFIG:
            self._config_said.update(str(notice.details.get("error")) for notice in step.notices)
            with self._lock:
                self._config_waits.add(conversation_id)
            self._forget(conversation_id, state, unless_changed=True)
        elif step.delay is not None:
            self._retry(conversation_id, step.delay)

    def _forget(self, conversation_id: int, state: _State, *, unless_changed: bool = False) -> None:
        """Drop ``state`` unless a new change replaced it (or, ``unless_changed``, arrived during the catch-up)."""
        with self._lock:
            if self._states.get(conversation_id) is state and not (unless_changed and state.due > self.clock()):
                del self._states[conversation_id]

    def _retry(self, conversation_id: int, delay: float) -> None:
        with self._lock:
            state = self._states.get(conversation_id)
            if state is not None:
                state.due = self.clock() + delay

    def _say(self, event: str, ref: ConversationRef | None, message: str, **details: object) -> None:
        self.log(WatchEvent(event, message, ref.display_id if ref is not None else None, details))

    def _log_report(self, ref: ConversationRef, report: CatchupReport) -> None:
        notices = report_notices(
            written=report.written,
            model=report.model,
            dropped=report.dropped,
            refused=report.refused,
            notes=report.notes,
            locked=report.locked,
            skipped=report.skipped,
            once=self.options.once,
            upgrade=report.upgrade if report.upgraded else None,
        )
        for notice in notices:
            self._say(notice.event, ref, notice.message, **notice.details)

    def _idle(self) -> set[str]:
        """The conversations the workspace cache says have no turn waiting for a summary (read only when they
        change, not by the start-up pass)."""
        upgrade = self.options.catchup.upgrade
        found: set[str] = set()
        for workspace in self.workspaces:
            found |= settled(
                workspace, lambda text: self._say("index", None, text), upgrade=upgrade, jobs=self.options.jobs
            )
        return found

    def run_once(self) -> None:
        """Catch up every conversation now (as ``--once`` does), treating every turn as settled."""
        self._refresh_refs()
        self._run = CatchupRun()
        idle = self._idle()
        for conversation_id in sorted(self._refs):
            if self._refs[conversation_id].display_id in idle:
                continue
            past = self.clock() - self.options.settle - 1
            self._states[conversation_id] = _State(past, past)
            self._process(conversation_id, now_settled=True)
        self._states.clear()

    def pending(self, conversation_id: int | None = None) -> int:
        """How many conversations wait for a catch-up (or whether this one does)."""
        with self._lock:
            if conversation_id is not None:
                return int(conversation_id in self._states)
            return len(self._states)

    def stop(self) -> None:
        self._stop.set()

    def run(self, tick: float = 0.05) -> None:
        """Watch until ``stop()``: a startup pass over everything, then changes as they come."""
        observer, schedule = _observe(self.watched(), self.touched, lambda event, text: self._say(event, None, text))
        next_silo_check = self.clock() + SILO_RECHECK
        try:
            self._refresh_refs()
            idle = self._idle()
            for conversation_id, ref in self._refs.items():
                if ref.display_id in idle:
                    continue
                newest = max((stamp[0] for stamp in events_stamp(ref) if stamp is not None), default=None)
                age = now_epoch() - newest / 1e9 if newest is not None else 0.0
                self._mark(conversation_id, max(age, 0.0))
            while not self._stop.is_set():
                if self.clock() >= next_silo_check:
                    self._adopt_new_silos(schedule)
                    next_silo_check = self.clock() + SILO_RECHECK
                self._after_config_change()
                due = self._due()
                if due:
                    self._run = CatchupRun()
                for conversation_id in due:
                    if self._stop.is_set():
                        break
                    self._process(conversation_id)
                self._stop.wait(tick)
        finally:
            observer.stop()
            observer.join(timeout=5)

    def _config_files(self) -> tuple[tuple[str, FileIdentity | None], ...]:
        """The configuration files a catch-up reads, with their identity (a new, changed or removed one differs)."""
        paths = {path for workspace in self.workspaces for path in config_files(workspace, workspace.root, os.environ)}
        return tuple(sorted((str(path), file_identity(str(path))) for path in paths))

    def _after_config_change(self) -> None:
        """When a configuration file changed (or SIGHUP came), look again at the conversations waiting for it."""
        if not self._config_waits or (not self._hup.is_set() and monotonic() < self._config_checked + CONFIG_RECHECK):
            return
        self._config_checked = monotonic()
        stamp = self._config_files()
        if stamp == self._config_stamp and not self._hup.is_set():
            return
        self._hup.clear()
        self._config_stamp = stamp
        with self._lock:
            waiting, self._config_waits = self._config_waits, set()
        self._config_said.clear()
        self._say(
            "config", None, f"the configuration changed; looking again at {counted(len(waiting), 'conversation')}"
        )
        for conversation_id in waiting:
            self._mark(conversation_id, self.options.settle)

    def _adopt_new_silos(self, schedule: Callable[[Path], None]) -> None:
        """Pick up a user-local silo JP created after the watch started: its locks are the ones JP
        takes from then on, and its conversations are JP's copies."""
        for index, workspace in enumerate(self.workspaces):
            if workspace.user_silo is not None:
                continue
            found = find_workspace(workspace.root)
            if found is None or found.user_silo is None:
                continue
            self.workspaces[index] = found
            self._say(
                "following",
                None,
                f"{workspace.root}: following JP's user-local storage {found.user_silo}",
                workspace=str(workspace.root),
                user_local=str(found.user_silo),
            )
            schedule(found.user_silo)
            self._refresh_refs()
            for ref in list_conversations(found):
                self._mark(ref.id)

    def install_signal_handlers(self) -> None:
        """SIGTERM and Ctrl-C finish the write in progress, then stop."""

        def handle(signum: int, frame: object) -> None:
            self._say("stopping", None, "stopping after the current conversation")
            self.stop()

        signal.signal(signal.SIGTERM, handle)
        signal.signal(signal.SIGINT, handle)
        signal.signal(signal.SIGHUP, lambda signum, frame: self._hup.set())


class _Changes(FileSystemEventHandler):
    """Passes each changed path (both ends of a move) on."""

    def __init__(self, touched: Callable[[str], None]) -> None:
        self.touched = touched

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in CHANGES:
            return  # opening or reading a file (turnmark's own reads included) changes nothing
        for path in (event.src_path, getattr(event, "dest_path", "")):
            if path:
                self.touched(str(path))


OBSERVED = [
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]
"""Only changes: asking the kernel for opens and reads too would flood its queue with turnmark's own
reads of thousands of conversations (an overflow makes watchdog re-walk every folder)."""


def _observe(
    roots: Iterable[Path], touched: Callable[[str], None], log: Callable[[str, str], None]
) -> tuple[Any, Callable[[Path], None]]:
    """A watchdog observer on ``roots`` (recursive; the polling observer when inotify runs out), and
    how to add a root to it later. Neither walks through a link to a folder (a link loop in ``.jp``
    would never end)."""

    def add(observer: Any, root: Path) -> None:
        observer.schedule(_Changes(touched), str(root), recursive=True, event_filter=OBSERVED)

    def start(kind: Any) -> Any:
        observer = kind()
        for root in roots:
            add(observer, root)
        observer.start()
        return observer

    try:
        observer = start(Observer)
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EMFILE):
            raise
        log("polling", f"inotify is out of watches ({error.strerror}); polling every 5 s instead")
        observer = start(lambda: PollingObserverVFS(os.lstat, os.scandir, polling_interval=5))

    def schedule(root: Path) -> None:
        try:
            add(observer, root)
        except OSError as error:
            log("unwatched", f"cannot watch {root} ({error.strerror}); changes there are seen after a restart")

    return observer, schedule

"""What a catch-up was asked (``CatchupOptions``), what happened to one conversation (``CatchupReport``, the
``summarize --format json`` shape) and what a run learned about its models (``CatchupRun``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from turnmark.core.stream.legacy_upgrade import LegacyUpgrade
from turnmark.shell.settings import RunSettings
from turnmark.shell.storage.config_files import Layers
from turnmark.shell.storage.conversations import (
    EventsStamp,
)
from turnmark.shell.storage.workspace_cache import ConversationRow


@dataclass(frozen=True, kw_only=True)
class CatchupOptions(RunSettings):
    """What ``summarize`` was asked to do."""

    dry_run: bool = False
    upgrade: bool = False
    last_turn_open: bool | None = None
    """Whether the last turn may still be in progress; ``None``: only when another process holds the lock."""
    retry_failed: bool = False
    """Also ask for turns whose answers failed too often (``summarize --retry-failed``)."""
    settled_for: float | None = None
    """The last turn counts as finished only once the files as read have not changed for this long
    (``watch --settle``; ``None``: no such wait)."""
    max_batches: int | None = None
    """Ask for at most this many batches (``edit -i`` summarizes only the newest turn)."""
    undo_as: str | None = None
    """Keep an undo step before writing, named so (``edit -i`` makes the summary it writes first undoable)."""
    saved_by: str = "summarize"
    """The command named by the undo step a save that upgrades a legacy conversation keeps (``watch``)."""
    shared_layers: Layers | None = None
    """The run's configuration layers (``config_files.run_layers``) when the run read them once for all its
    conversations; ``None``: each catch-up reads them."""
    rows: bool = False
    """Make the conversation's workspace-cache row from the bytes the catch-up reads and writes (``summarize
    --all``: the run reads each conversation once, and its listing comes with it)."""


class _StoredUpgrade(msgspec.Struct, forbid_unknown_fields=True):
    ids_stamped: int
    config_split_out: bool
    turn_start_inserted: bool


class _StoredReport(msgspec.Struct, forbid_unknown_fields=True):
    """The keys and types ``CatchupReport.to_json`` writes."""

    conversation: str
    model: str | None = None
    budget: int | None = None
    plan: list[dict[str, str | int | None]] = msgspec.field(default_factory=list)
    written: dict[str, str] = msgspec.field(default_factory=dict)
    dropped: dict[str, str] = msgspec.field(default_factory=dict)
    refused: dict[str, str] = msgspec.field(default_factory=dict)
    notes: list[str] = msgspec.field(default_factory=list)
    too_large: dict[str, str] = msgspec.field(default_factory=dict)
    given_up: dict[str, str] = msgspec.field(default_factory=dict)
    error: str | None = None
    skipped: str | None = None
    save_refused: str | None = None
    upgraded: bool = False
    upgrade: _StoredUpgrade | None = None


_PLAN_ROW_TYPES = {"turn": (str,), "index": (int,), "tokens": (int,), "batch": (int,), "excluded": (str,)}


def _plan_row(row: dict[str, str | int | None]) -> bool:
    """A row ``plan_rows`` makes: a turn, its index and tokens, and either its batch or why it was left out."""
    keys = set(row)
    return keys in ({"turn", "index", "tokens", "batch"}, {"turn", "index", "tokens", "excluded"}) and all(
        type(value) in _PLAN_ROW_TYPES[key] for key, value in row.items()
    )


@dataclass
class CatchupReport:
    """What happened to one conversation (the ``summarize --format json`` shape)."""

    conversation: str
    model: str | None = None
    budget: int | None = None
    plan: list[dict[str, object]] = field(default_factory=list)
    written: dict[str, str] = field(default_factory=dict)
    dropped: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    conversation_problem: bool = False
    """The error is in the conversation itself (unreadable, unsavable): retrying before it changes is useless."""
    config_problem: bool = False
    """The error is the configuration (a missing key, an unusable model): retrying before it changes is useless."""
    too_large: dict[str, str] = field(default_factory=dict)
    """Turns that do not fit the model's window on their own: they wait for a larger model, not the next run."""
    given_up: dict[str, str] = field(default_factory=dict)
    """Turns not asked for again: their answers failed too often with the same content."""
    skipped: str | None = None
    """Why nothing was tried: the conversation is locked, or its model failed earlier in this run."""
    locked: bool = False
    repeated: bool = False
    """``error`` was already reported for another conversation of this run."""
    save_refused: str | None = None
    """Why a real run would not save what it summarized (a dry run's prediction, by the rule the save applies)."""
    unsettled: float | None = field(default=None, compare=False)
    """Seconds until the files as read have rested for ``settled_for`` (their last turn was left alone)."""
    last_write: EventsStamp | None = field(default=None, compare=False)
    """How ``events.json`` stood right after turnmark's last write, under the lock (the watcher ignores that write)."""
    upgrade: LegacyUpgrade | None = None
    """The upgrade from JP's older format the save performed (``upgraded``) or, in a dry run, would perform."""
    upgraded: bool = False
    row: ConversationRow | None = field(default=None, compare=False)
    """With ``CatchupOptions.rows``: the conversation's workspace-cache row as the catch-up left it (read, or
    written); ``None`` when it cannot be made (the files changed while being read)."""
    read_locked: bool | None = field(default=None, compare=False)
    """Whether another process held the lock when the conversation was read (a dry run's plan depends on it)."""

    @property
    def done(self) -> bool:
        """Everything asked of this conversation happened (or there was nothing to do)."""
        return self.error is None and self.skipped is None and self.save_refused is None

    @classmethod
    def from_json(cls, value: object) -> CatchupReport:
        """The report ``to_json`` wrote (a stored dry run's, shown again); ``ValueError`` for any other key, a value
        of another type or a plan row ``plan_rows`` does not make."""
        stored = msgspec.convert(value, _StoredReport, strict=True)
        if not all(_plan_row(row) for row in stored.plan):
            raise ValueError("a plan row that is not one a dry run makes")
        upgrade = stored.upgrade
        fields = {name: getattr(stored, name) for name in stored.__struct_fields__}
        fields["plan"] = [dict(row) for row in stored.plan]
        fields["upgrade"] = None if upgrade is None else LegacyUpgrade.from_json(msgspec.structs.asdict(upgrade))
        return cls(**fields)

    def to_json(self) -> dict[str, object]:
        return {
            "conversation": self.conversation,
            "model": self.model,
            "budget": self.budget,
            "plan": self.plan,
            "written": self.written,
            "dropped": self.dropped,
            "refused": self.refused,
            "notes": self.notes,
            "too_large": self.too_large,
            "given_up": self.given_up,
            "error": self.error,
            "skipped": self.skipped,
            "save_refused": self.save_refused,
            "upgraded": self.upgraded,
            "upgrade": None if self.upgrade is None else self.upgrade.to_json(),
        }


@dataclass
class CatchupRun:
    """What one run (a ``summarize``, one ``watch`` pass) learned about its models.

    A model that cannot be used (a missing key, a rejected request that cannot
    succeed) or an endpoint that did not answer is tried once per run: the
    conversations after it are skipped for that reason, and it is reported once.
    """

    failures: dict[str, str] = field(default_factory=dict)
    configuration: set[str] = field(default_factory=set)
    """The keys whose failure is the configuration's (a missing key, an unusable model)."""

    def failure(self, key: str) -> str | None:
        return self.failures.get(key)

    def remember(self, key: str, message: str, *, configuration: bool = False) -> None:
        self.failures.setdefault(key, message)
        if configuration:
            self.configuration.add(key)

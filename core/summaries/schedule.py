"""What ``turnmark watch`` does with a conversation after a catch-up, and what it logs about it.

A conversation that is itself the problem (unreadable, unsavable) is given up
until it changes; one whose model the configuration makes unusable (a missing
key, an unknown model) waits for the configuration to change, said once. Any
other error, or a skip that is not a lock, is retried after a back-off that
starts at ``BACKOFF_FIRST`` and doubles up to ``BACKOFF_MAX`` (``--once`` only
reports it). A locked conversation is looked
at again after ``LOCKED_RETRY``, one whose last turn had not settled once it
has, and a settled one is done. Times are seconds.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from turnmark.core.stream.legacy_upgrade import LegacyUpgrade
from turnmark.core.text.wording import counted

LOCKED_RETRY = 2.0
BACKOFF_FIRST = 5.0
BACKOFF_MAX = 300.0


class Action(Enum):
    """What happens to the conversation's place in the watcher's queue."""

    GIVE_UP = "give_up"
    """Forget it until it changes."""
    BACK_OFF = "back_off"
    """Look again after the back-off."""
    LOCKED = "locked"
    """Look again soon: it was locked."""
    SETTLE = "settle"
    """Look again once its last change has rested for the settle period."""
    WAIT_FOR_CONFIG = "wait_for_config"
    """Look again when a configuration file changes (or on SIGHUP), or when it changes itself."""
    FORGET = "forget"
    """Done: forget it, unless it changed during the catch-up."""
    LEAVE = "leave"
    """Nothing: a ``--once`` pass looks at every conversation once."""


@dataclass(frozen=True)
class Notice:
    """A line to log about the conversation: the event name, the message and the details ``--format json`` adds."""

    event: str
    message: str
    details: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    """What to do after a catch-up."""

    action: Action
    backoff: float
    """The conversation's back-off from now on (0: none)."""
    delay: float | None = None
    """Seconds until the conversation is looked at again (the retrying actions only)."""
    notices: tuple[Notice, ...] = ()
    remember_written: bool = False
    """Summaries were written once the turn had settled: the files as they are now are turnmark's own write."""


def report_notices(
    *,
    written: Mapping[str, str],
    model: str | None,
    dropped: Mapping[str, str],
    refused: Mapping[str, str],
    notes: Sequence[str],
    locked: bool,
    skipped: str | None,
    once: bool,
    upgrade: LegacyUpgrade | None = None,
) -> tuple[Notice, ...]:
    """What a catch-up did, as log lines: the summaries written, the upgrade from JP's older format their save
    performed, the results dropped or refused, its notes, a skip.

    >>> [(n.event, n.message) for n in report_notices(written={"a1": "Fix the parser"}, model="ollama/qwen3:4b",
    ...     dropped={}, refused={"b2": "a turn ID"}, notes=(), locked=True, skipped="jp holds the lock", once=False)]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('summarized', 'summarized 1 turn with ollama/qwen3:4b'), ('refused', 'no summary for b2: a turn ID'),
     ('locked', 'skipped because it is locked (jp holds the lock); retrying')]
    """
    notices: list[Notice] = []
    if written:
        message = f"summarized {counted(len(written), 'turn')} with {model}"
        notices.append(Notice("summarized", message, {"model": model, "summaries": dict(written)}))
    if upgrade is not None:
        said = f"upgraded from JP's older format ({upgrade.describe()}); `turnmark edit --undo` takes it back"
        notices.append(Notice("upgraded", said, {"upgrade": upgrade.to_json()}))
    for turn_id, reason in dropped.items():
        notices.append(
            Notice("stale", f"dropped a stale result for {turn_id}: {reason}", {"turn": turn_id, "reason": reason})
        )
    for turn_id, reason in refused.items():
        notices.append(Notice("refused", f"no summary for {turn_id}: {reason}", {"turn": turn_id, "reason": reason}))
    notices += [Notice("note", note) for note in notes]
    if locked:
        retry = "" if once else "; retrying"
        notices.append(Notice("locked", f"skipped because it is locked ({skipped}){retry}", {"reason": skipped}))
    elif skipped:
        notices.append(Notice("skipped", f"skipped: {skipped}", {"reason": skipped}))
    return tuple(notices)


def next_step(
    *,
    error: str | None,
    conversation_problem: bool,
    skipped: str | None,
    config_problem: bool = False,
    locked: bool,
    repeated: bool,
    written: bool,
    settled: bool,
    backoff: float,
    once: bool,
    last_change: float,
    settle: float,
    now: float,
) -> Step:
    """The step after a catch-up that reported ``error``, ``skipped`` and the rest (``CatchupReport``'s fields).

    ``settled``: the last change had rested for ``settle`` when the catch-up began; ``backoff``: the
    conversation's current back-off; ``last_change`` and ``now``: clock readings.

    >>> step = next_step(error="ollama/qwen3:4b: connection refused", conversation_problem=False, skipped=None,
    ...     locked=False, repeated=False, written=False, settled=True, backoff=5.0, once=False,
    ...     last_change=100.0, settle=5.0, now=110.0)
    >>> step.action, step.delay, [notice.message for notice in step.notices]
    (<Action.BACK_OFF: 'back_off'>, 10.0, ['not summarized, retrying in 10s: ollama/qwen3:4b: connection refused'])
    >>> step = next_step(error="ANTHROPIC_API_KEY is not set", conversation_problem=False, skipped=None,
    ...     config_problem=True, locked=False, repeated=False, written=False, settled=True, backoff=0.0,
    ...     once=False, last_change=100.0, settle=5.0, now=110.0)
    >>> step.action, step.delay, [notice.event for notice in step.notices]
    (<Action.WAIT_FOR_CONFIG: 'wait_for_config'>, None, ['waiting_for_config'])
    """
    if error and conversation_problem:
        notice = Notice("given_up", f"not summarized until it changes: {error}", {"error": error})
        return Step(Action.GIVE_UP, backoff, notices=(notice,))
    if config_problem and not once:
        message = f"not summarized until the configuration changes (a config file, or SIGHUP): {error}"
        said = () if repeated or not error else (Notice("waiting_for_config", message, {"error": error}),)
        return Step(Action.WAIT_FOR_CONFIG, backoff, notices=said)
    if error or (skipped and not locked):
        if once:
            reported = bool(error) and not repeated
            notices = (Notice("not_summarized", f"not summarized: {error}", {"error": error}),) if reported else ()
            return Step(Action.LEAVE, backoff, notices=notices)
        longer = min(max(backoff * 2, BACKOFF_FIRST), BACKOFF_MAX)
        reason = error if error and not repeated else skipped
        message = f"not summarized, retrying in {longer:.0f}s: {reason}"
        notice = Notice("retrying", message, {"error": reason, "retry_in_seconds": longer})
        return Step(Action.BACK_OFF, longer, longer, (notice,))
    if locked:
        return Step(Action.LOCKED, 0.0, LOCKED_RETRY)
    if not settled:
        return Step(Action.SETTLE, 0.0, max(last_change + settle - now, 0.0))
    return Step(Action.FORGET, 0.0, remember_written=written)


def still_settling(changed_ns: int | None, settle: float, now: float) -> float | None:
    """Seconds until files last changed at ``changed_ns`` (their newest mtime or ctime; ``None``: they
    changed while they were read) have rested for ``settle``, or ``None`` when they have.

    The watcher hears of a change a moment after it lands; a catch-up that begins in that moment would
    read a turn that has not rested. So the last turn is judged by the files as read: one the clock
    cannot judge (a file more than ``settle`` in its future) is left to the watcher's own timing.

    >>> still_settling(100 * 10**9, 5.0, 103.0), still_settling(100 * 10**9, 5.0, 106.0), still_settling(None, 5.0, 1.0)
    (2.0, None, 5.0)
    >>> still_settling(100 * 10**9, 5.0, 98.0), still_settling(100 * 10**9, 5.0, 90.0)
    (5.0, None)
    """
    if changed_ns is None:
        return settle
    age = now - changed_ns / 1e9
    if age >= settle or age < -settle:
        return None
    return settle - age if age >= 0 else settle


def after_exception(error: str, backoff: float) -> Step:
    """The step after a catch-up that raised ``error``: log it and look again after ``BACKOFF_FIRST``.

    The back-off is kept as it was: one broken conversation never stops the service.

    >>> step = after_exception("boom", 20.0)
    >>> step.action, step.backoff, step.delay, [(notice.event, notice.message) for notice in step.notices]
    (<Action.BACK_OFF: 'back_off'>, 20.0, 5.0, [('failed', 'failed: boom')])
    """
    return Step(Action.BACK_OFF, backoff, BACKOFF_FIRST, (Notice("failed", f"failed: {error}", {"error": error}),))

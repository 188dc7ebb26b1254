"""The commands that change a conversation's structure: ``repair`` (fix what ``check`` finds) and ``strip``."""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Annotated

import typer

from turnmark.core.text.wording import counted
from turnmark.shell.cli.common import (
    ConversationArgument,
    FormatOption,
    OutputFormat,
    app,
    chosen,
    settings_of,
    upgrade_json,
    upgrade_line,
)
from turnmark.shell.errors import ConversationError
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.output import chrome, emit_json, emit_line, fail

with lazy_imports():
    from turnmark.core.editing import repair as repair_plan
    from turnmark.core.editing import strip as strip_keys
    from turnmark.core.stream import legacy_upgrade
    from turnmark.core.stream import turns as stream_turns
    from turnmark.shell.storage import conversations, locking, undo

if TYPE_CHECKING:
    from turnmark.core.editing.repair import Fix, Problem, RepairPlan
    from turnmark.core.stream.conversation_stream import ConversationStream
    from turnmark.core.stream.event_ids import IdSource
    from turnmark.core.stream.legacy_upgrade import LegacyUpgrade
    from turnmark.shell.storage.conversations import LoadedConversation
    from turnmark.shell.storage.workspace import ConversationRef

REPAIR_HELP = """
Without --apply, repair prints its plan and changes nothing. Fixes that follow
from the conversation alone are applied with --apply: an answer whose
request_id names a copied request is linked to the copy in its own turn; an
answer whose request was deleted (or whose request_id names something that is
not a request, or is not an ID) is linked to its turn's only request; an
event_id that is not a string gets the ID that stands in for it, and a
request_id read as absent (null, or on a kind that never links) is removed.
Problems with several
possible fixes (several requests in the turn, none at all, a tool result with
no call or a call with no result) wait for -i, which asks one question per
problem (Enter takes the first choice, s skips, q stops and keeps what was
decided) and then applies. --backfill also links, in every turn with one
request, the answering events written before request links existed; it is
never done otherwise. Every turn whose events change loses its summary. The
conversation is written under JP's lock, only if it did not change since the
plan was made.
"""


def _entry(stream: ConversationStream, position: int, type_tag: str, event_id: str) -> str:
    return f"entry {stream.file_index(position)} ({type_tag} {event_id})"


def _changes_nothing(stream: ConversationStream, fix: Fix) -> bool:
    """A relink to the request the entry already names: it only confirms the link (kept in the JSON)."""
    return fix.kind in ("relink", "backfill") and stream.entries[fix.position].request_id == fix.request_id


def _spans(numbers: list[int]) -> str:
    """``3-7, 9``: entry numbers with their runs joined."""
    runs: list[list[int]] = []
    for number in sorted(numbers):
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def _doing(kind: str, count: int, request_id: str | None) -> str:
    return {
        "relink": f"relink {counted(count, 'answer')} to request {request_id}",
        "backfill": f"link {counted(count, 'answer')} to request {request_id}",
        "unlink": f"unlink {counted(count, 'answer')} (they become visible)",
        "delete": f"delete {counted(count, 'entry', 'entries')}",
        "give_id": f"write the event_id that stands in for {counted(count, 'entry', 'entries')}",
        "drop_key": f"remove request_id from {counted(count, 'entry', 'entries')}",
    }.get(kind, f"answer {counted(count, 'tool call')} with the error result JP writes for an interrupted call")


def _fix_lines(stream: ConversationStream, fixes: list[Fix]) -> list[str]:
    """One line per turn, change and cause: ``turn 1: relink 45 answers to request ocb6k1v (entries 3-47); why``."""
    turns = stream_turns.turn_indices(stream.entries)
    groups: dict[tuple[int, str, str | None, str], list[Fix]] = {}
    for fix in fixes:
        copied = stream.entries[fix.position].request_id
        why = fix.why
        if fix.kind == "relink" and copied in stream.duplicated_ids:
            why = f"request {copied} was copied, and {fix.request_id} is the copy in this turn"
        groups.setdefault((turns[fix.position], fix.kind, fix.request_id, why), []).append(fix)
    lines = []
    for (turn, kind, request_id, why), same in groups.items():
        numbers = [stream.file_index(fix.position) for fix in same]
        where = f"{'entry' if len(numbers) == 1 else 'entries'} {_spans(numbers)}"
        lines.append(f"  turn {turn}: {_doing(kind, len(same), request_id)} ({where}); {why}")
    return lines


def _problem_line(stream: ConversationStream, problem: Problem) -> str:
    choices = ", ".join(_choice(choice) for choice in problem.choices)
    where = _entry(stream, problem.position, problem.type_tag, problem.event_id)
    return f"  decide      {where}: {problem.why}; choices: {choices}"


def _choice(fix: Fix) -> str:
    return {"relink": f"relink to {fix.request_id}", "answer_call": "answer with an error result"}.get(
        fix.kind, fix.kind
    )


def _fix_json(stream: ConversationStream, fix: Fix) -> dict[str, object]:
    return {
        "kind": fix.kind,
        "index": stream.file_index(fix.position),
        "event_id": fix.event_id,
        "type": fix.type_tag,
        "request_id": fix.request_id,
        "change": fix.what(),
        "why": fix.why,
    }


@dataclass
class Outcome:
    """What ``repair`` did for one conversation (the ``--format json`` shape)."""

    conversation: str
    plan: RepairPlan | None = None
    stream: ConversationStream | None = None
    decided: list[Fix] = field(default_factory=list)
    applied: bool = False
    error: str | None = None
    upgrade: LegacyUpgrade | None = None
    """The upgrade from JP's older format the save performed, or (not ``applied``) would perform."""

    def to_json(self) -> dict[str, object]:
        plan, stream = self.plan, self.stream
        if plan is None or stream is None:
            return {"id": self.conversation, "error": self.error}
        return {
            "id": self.conversation,
            "fixes": [_fix_json(stream, fix) for fix in [*plan.fixes, *self.decided]],
            "problems": [
                {
                    "index": stream.file_index(problem.position),
                    "event_id": problem.event_id,
                    "type": problem.type_tag,
                    "why": problem.why,
                    "choices": [_fix_json(stream, choice) for choice in problem.choices],
                }
                for problem in plan.problems
                if problem.position not in {fix.position for fix in self.decided}
            ],
            "backfill_left": plan.backfill_left,
            "applied": self.applied,
            "error": self.error,
            **upgrade_json(self.upgrade, done=self.applied),
        }


def _ask(stream: ConversationStream, problems: tuple[Problem, ...]) -> list[Fix]:
    """One question per problem on the terminal; stops at ``q`` keeping what was decided."""
    decided: list[Fix] = []
    for problem in problems:
        chrome(_problem_line(stream, problem).strip())
        for number, choice in enumerate(problem.choices, start=1):
            chrome(f"  {number}) {_choice(choice)}{' (default)' if number == 1 else ''}")
        numbers = "1" if len(problem.choices) == 1 else f"1-{len(problem.choices)}"
        while True:
            sys.stderr.write(f"choice [{numbers}, Enter = 1, s skip, q stop]: ")
            sys.stderr.flush()
            answer = sys.stdin.readline()
            if not answer or answer.strip() == "q":
                return decided
            answer = answer.strip() or "1"
            if answer == "s":
                break
            if answer.isdecimal() and 1 <= int(answer) <= len(problem.choices):
                decided.append(problem.choices[int(answer) - 1])
                break
            chrome(f"  {answer!r} is not one of the choices: type {numbers.replace('-', ' to ')}, s or q")
    return decided


def _repair_one(ref: ConversationRef, new_id: IdSource, apply: bool, interactive: bool, backfill: bool) -> Outcome:
    outcome = Outcome(ref.display_id)
    try:
        loaded = conversations.read_conversation(ref, new_id, digest=True)
        plan = repair_plan.plan_repairs(loaded.stream, backfill=backfill)
        outcome.plan, outcome.stream = plan, loaded.stream
        if interactive and plan.problems:
            outcome.decided = _ask(loaded.stream, plan.problems)
        fixes = [*plan.fixes, *outcome.decided]
        if (apply or interactive) and fixes:
            outcome.upgrade = _write(ref, loaded, fixes, new_id)
            outcome.applied = True
        elif fixes and (repaired := repair_plan.apply_repairs(loaded.stream, fixes)) != loaded.stream:
            outcome.upgrade = legacy_upgrade.legacy_upgrade(loaded.stream, repaired)
    except ConversationError as error:
        outcome.error = str(error)
    return outcome


def _write(
    ref: ConversationRef, planned: LoadedConversation, fixes: list[Fix], new_id: IdSource
) -> LegacyUpgrade | None:
    """Apply the fixes under the lock, on a copy read under it, if the conversation did not change meanwhile;
    the upgrade from JP's older format the save performed."""
    with locking.hold_lock(ref) as lock:
        fresh = conversations.read_conversation(ref, new_id, lock, digest=True)
        if fresh.events_sha256 != planned.events_sha256:
            raise ConversationError(
                f"{ref.display_id}: changed since the plan was made; nothing written, run repair again"
            )
        repaired = repair_plan.apply_repairs(fresh.stream, fixes)
        return undo.saved_with_undo(fresh, partial(conversations.save_stream, lock, fresh, repaired), "repair").upgrade


@app.command(epilog=REPAIR_HELP)
def repair(
    ctx: typer.Context,
    conversation: ConversationArgument = None,
    all_conversations: Annotated[
        bool, typer.Option("--all", "-a", help="Every conversation of the workspace.")
    ] = False,
    apply: Annotated[bool, typer.Option("--apply", help="Make the fixes (default: show the plan only).")] = False,
    interactive: Annotated[
        bool, typer.Option("--interactive", "-i", help="Ask about each problem that needs a decision, then apply.")
    ] = False,
    backfill: Annotated[
        bool, typer.Option("--backfill", help="Also link answers written before request links (one-request turns).")
    ] = False,
    output_format: FormatOption = None,
) -> None:
    """Fix what `turnmark check` finds: links to copied or deleted requests, orphaned tool halves.

    Exit status: 0 when nothing is left to fix, 1 when fixes are pending (a dry run that found some,
    as `git diff --exit-code` does), problems wait for a decision (-i) or a conversation could not be
    written, 2 on bad input.
    """
    settings = settings_of(ctx)
    if interactive and not sys.stdin.isatty():
        raise fail("-i asks on the terminal: run it in one (or use --apply for the fixes that need no decision)")
    refs = chosen(settings, conversation, all_conversations)
    outcomes = [_repair_one(ref, settings.new_id, apply, interactive, backfill) for ref in refs]
    for outcome in outcomes:
        if outcome.error:
            chrome(f"error: {outcome.error}")
    if settings.resolve_format(output_format) is OutputFormat.json:
        rows = [outcome.to_json() for outcome in outcomes]
        emit_json({"ok": all(not row.get("problems") and not row["error"] for row in rows), "conversations": rows})
    else:
        for outcome in outcomes:
            for line in _repair_lines(outcome, apply or interactive):
                emit_line(line)
    pending = any(_fixes(outcome) and not outcome.applied for outcome in outcomes)
    if pending or any(outcome.error or (outcome.plan and outcome.to_json()["problems"]) for outcome in outcomes):
        raise typer.Exit(1)


def _fixes(outcome: Outcome) -> list[Fix]:
    """The fixes that change something (a link confirmed as it is changes nothing)."""
    if outcome.plan is None or outcome.stream is None:
        return []
    stream = outcome.stream
    return [fix for fix in (*outcome.plan.fixes, *outcome.decided) if not _changes_nothing(stream, fix)]


def _repair_lines(outcome: Outcome, applying: bool) -> list[str]:
    plan, stream = outcome.plan, outcome.stream
    if plan is None or stream is None:
        return [f"{outcome.conversation}  not repaired: see the error above"]
    every_fix = [*plan.fixes, *outcome.decided]
    fixes = _fixes(outcome)
    open_problems = [p for p in plan.problems if p.position not in {fix.position for fix in outcome.decided}]
    if not every_fix and not open_problems:
        return [f"{outcome.conversation}  nothing to repair"]
    done = "applied" if outcome.applied else ("not applied" if applying else "would apply")
    head = f"{outcome.conversation}  {done}: {len(fixes)} fix{'es' if len(fixes) != 1 else ''}"
    if confirmed := len(every_fix) - len(fixes):
        kept = "they are" if confirmed > 1 else "it is"
        head += f", {counted(confirmed, 'link')} to the original of a copied request kept as {kept}"
    if open_problems:
        verb = "needs" if len(open_problems) == 1 else "need"
        head += f", {len(open_problems)} {verb} a decision (turnmark repair -i {outcome.conversation})"
    if plan.backfill_left:
        head += (
            f", {plan.backfill_left} turn{'s' if plan.backfill_left != 1 else ''} with several requests left unlinked"
        )
    return [
        head,
        *upgrade_line(outcome.conversation, outcome.upgrade, done=outcome.applied),
        *_fix_lines(stream, fixes),
        *(_problem_line(stream, p) for p in open_problems),
    ]


def _strip_state(row: dict[str, object]) -> str:
    """``would be stripped: 21 event_ids, 17 request_ids and 1 turn summary would go``, or what happened."""
    if row["error"]:
        return "not stripped: see the error above"
    removes = row["removes"]
    if not isinstance(removes, dict):
        return "nothing to strip"
    what = strip_keys.stripped_text(removes)
    if row["applied"]:
        return f"stripped: {what} removed (`turnmark edit --undo {row['id']}` takes it back)"
    return f"would be stripped: {what} would go (--apply writes it)"


STRIP_HELP = """
For a JP release from before event IDs, request links and turn summaries,
which refuses a turn_start with keys it does not know: removes event_id,
request_id, turn summaries and turnmark's provenance, and nothing else. A conversation turnmark upgraded from
the legacy format stays in the current format (that JP reads it). Dry run by
default (exit 1 when a conversation would change, as `git diff --exit-code`
does); --apply writes under JP's lock.
"""


@app.command(epilog=STRIP_HELP)
def strip(
    ctx: typer.Context,
    conversation: ConversationArgument = None,
    all_conversations: Annotated[
        bool, typer.Option("--all", "-a", help="Every conversation of the workspace.")
    ] = False,
    apply: Annotated[
        bool, typer.Option("--apply", help="Write the stripped files (default: say what would change).")
    ] = False,
    output_format: FormatOption = None,
) -> None:
    """Remove the keys turnmark adds, so an older JP can open the conversation again."""
    settings = settings_of(ctx)
    refs = chosen(settings, conversation, all_conversations)
    rows: list[dict[str, object]] = []
    for ref in refs:
        row: dict[str, object] = {
            "id": ref.display_id,
            "changes": False,
            "removes": None,
            "applied": False,
            "error": None,
        }
        try:
            loaded = conversations.read_conversation(ref, settings.new_id, digest=True)
            data = strip_keys.stripped_events(loaded.stream)
            row["changes"] = hashlib.sha256(data).hexdigest() != loaded.events_sha256
            row["removes"] = strip_keys.stripped_counts(loaded.stream) if row["changes"] else None
            if apply and row["changes"]:
                with locking.hold_lock(ref) as lock:
                    fresh = conversations.read_conversation(ref, settings.new_id, lock)
                    stripped = strip_keys.stripped_events(fresh.stream)
                    undo.saved_with_undo(
                        fresh,
                        partial(conversations.write_documents, lock, fresh, None, stripped, saving=fresh.stream),
                        "strip --apply",
                    )
                row["applied"] = True
        except ConversationError as error:
            row["error"] = str(error)
            chrome(f"error: {error}")
        rows.append(row)
    if settings.resolve_format(output_format) is OutputFormat.json:
        emit_json({"ok": not any(row["error"] for row in rows), "conversations": rows})
    else:
        for row in rows:
            emit_line(f"{row['id']}  {_strip_state(row)}")
    if any(row["error"] or (row["changes"] and not row["applied"]) for row in rows):
        raise typer.Exit(1)

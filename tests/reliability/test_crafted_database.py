"""A crafted cache database: one turnmark did not make, planted where turnmark looks for its own.

Each case builds a real database (``conversations``, ``find``, ``check --all``, ``summarize --all --dry-run``
run as real processes), tampers with it through sqlite3 (an extra trigger that rewrites titles and plans, a
view in place of a table, a trigger whose recursive query never ends, a value or a column of another type,
a stored plan with an extra key) and runs the same commands twice more. Each run must exit as the clean run
did, print what it printed on stdout and no traceback on stderr; ``TIMEOUT`` only guards against a hang.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .hostile_cli import Tally
from .processes import cache_folder, isolated_env, run_turnmark

TIMEOUT = 60.0
"""Seconds a run may take before it counts as hung (a clean one takes under one)."""
COMMANDS = (
    ("conversations",),
    ("--format", "text", "conversations"),
    ("find", "retry"),
    ("check", "--all"),
    ("summarize", "--all", "--dry-run", "--model", "builtin/extractive"),
)
SPIN = "SELECT count(*) FROM (WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r)"
"""A query that never ends."""


def _retyped(connection: sqlite3.Connection, table: str, declared: str, instead: str, *, copy: bool) -> None:
    """``table`` made again with ``declared`` in its SQL read as ``instead`` (its rows copied when ``copy``)."""
    (sql,) = connection.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    assert declared in sql
    connection.execute(f"ALTER TABLE {table} RENAME TO {table}_before")
    connection.execute(sql.replace(declared, instead).replace(f"CREATE TABLE {table}_before", f"CREATE TABLE {table}"))
    if copy:
        connection.execute(f"INSERT INTO {table} SELECT * FROM {table}_before")
    connection.execute(f"DROP TABLE {table}_before")


def _unindexed(connection: sqlite3.Connection) -> None:
    """Forget every turn row, so the next ``find`` writes them again."""
    for table in ("turns", "turns_fts", "turns_all_fts"):
        connection.execute(f"DELETE FROM {table}")
    connection.execute("UPDATE conversations SET indexed = 0")


def forging_triggers(connection: sqlite3.Connection) -> None:
    for event in ("INSERT", "UPDATE"):
        connection.execute(
            f"CREATE TRIGGER forge_title_{event.lower()} AFTER {event} ON conversations "
            "WHEN new.title IS NOT 'FORGED TITLE' "
            "BEGIN UPDATE conversations SET title = 'FORGED TITLE' WHERE conversation = new.conversation; END"
        )
    connection.execute(
        "CREATE TRIGGER forge_plan AFTER INSERT ON plans BEGIN UPDATE plans SET report = "
        "json_set(report, '$.notes', json_array('FORGED NOTE'), '$.plan', json_array()) "
        "WHERE conversation = new.conversation; END"
    )
    connection.execute("DELETE FROM plans")
    connection.execute("DELETE FROM conversations")
    _unindexed(connection)


def forging_view(connection: sqlite3.Connection) -> None:
    connection.execute("ALTER TABLE plans RENAME TO plans_kept")
    connection.execute(
        "CREATE VIEW plans AS SELECT conversation, inputs, "
        """replace(report, '"notes": []', '"notes": ["FORGED NOTE"]') AS report FROM plans_kept"""
    )


def spinning_trigger(connection: sqlite3.Connection) -> None:
    connection.execute("UPDATE conversations SET indexed = 0, cached = 0")
    for event in ("INSERT", "UPDATE", "DELETE"):
        for table in ("conversations", "turns", "plans"):
            connection.execute(
                f"CREATE TRIGGER spin_{table}_{event.lower()} AFTER {event} ON {table} BEGIN {SPIN}; END"
            )


def spinning_view(connection: sqlite3.Connection) -> None:
    connection.execute("ALTER TABLE meta RENAME TO meta_kept")
    connection.execute(f"CREATE VIEW meta AS SELECT key, value FROM meta_kept WHERE ({SPIN}) > 0")


def spans_not_json(connection: sqlite3.Connection) -> None:
    connection.execute("UPDATE turns SET spans = 'not json'")


def checked_ns_declared_text(connection: sqlite3.Connection) -> None:
    _retyped(connection, "conversations", "checked_ns INTEGER", "checked_ns TEXT", copy=True)


def checked_ns_value_text(connection: sqlite3.Connection) -> None:
    connection.execute("UPDATE conversations SET checked_ns = 'yesterday', turns = 'many'")


def conversation_integer_key(connection: sqlite3.Connection) -> None:
    _retyped(
        connection, "conversations", "conversation TEXT PRIMARY KEY", "conversation INTEGER PRIMARY KEY", copy=False
    )
    _unindexed(connection)


def plan_extra_key(connection: sqlite3.Connection) -> None:
    connection.execute("UPDATE plans SET report = json_set(report, '$.forged', 1)")


def plan_wrong_type(connection: sqlite3.Connection) -> None:
    connection.execute("UPDATE plans SET report = json_set(report, '$.plan', json_array(json_object('turn', 1)))")


def check_report_not_json(connection: sqlite3.Connection) -> None:
    connection.execute("UPDATE conversations SET check_report = '{\"ok\": tr' WHERE check_report IS NOT NULL")


def check_report_extra_key(connection: sqlite3.Connection) -> None:
    connection.execute("UPDATE conversations SET check_report = json_set(check_report, '$.forged', 1)")


def check_report_wrong_types(connection: sqlite3.Connection) -> None:
    connection.execute(
        "UPDATE conversations SET check_report = json_set(check_report, '$.links.linked', 'many', "
        "'$.unresolved', json_array(json_object('index', 'x')), '$.duplicated_ids', json_array(7))"
    )


def check_report_unknown_reason(connection: sqlite3.Connection) -> None:
    connection.execute(
        "UPDATE conversations SET check_report = json_set(check_report, '$.links.unresolved_by_reason', "
        "json_object('forged_reason', 1))"
    )


def text_not_utf8(connection: sqlite3.Connection) -> None:
    """Text no UTF-8 decoder reads, in an integer column and in a text column (Python's sqlite3 refuses a whole
    query over one such value)."""
    connection.execute("UPDATE conversations SET turns = CAST(x'ff' AS TEXT) WHERE rowid % 2 = 0")
    connection.execute("UPDATE conversations SET title = CAST(x'c3' AS TEXT) WHERE rowid % 2 = 1")


def turns_text_not_utf8(connection: sqlite3.Connection) -> None:
    """The same in ``find``'s turn rows: a label, a turn ID, the spans."""
    connection.execute("UPDATE turns SET label = CAST(x'ff' AS TEXT) WHERE id % 3 = 0")
    connection.execute("UPDATE turns SET turn_id = CAST(x'c3' AS TEXT) WHERE id % 3 = 1")
    connection.execute("UPDATE turns SET spans = CAST(x'ff' AS TEXT) WHERE id % 3 = 2")


def plans_text_not_utf8(connection: sqlite3.Connection) -> None:
    """The same in the stored plans: their inputs and their reports."""
    connection.execute("UPDATE plans SET inputs = CAST(x'ff' AS TEXT) WHERE rowid % 2 = 0")
    connection.execute("UPDATE plans SET report = CAST(x'c3' AS TEXT) WHERE rowid % 2 = 1")


def listing_snapshot_garbled(connection: sqlite3.Connection) -> None:
    """The listing's snapshot: its looks and rows not what turnmark writes (one that claims every file looks the
    same, one that does not decode)."""
    connection.execute("UPDATE listing SET rows = x'00', looks = x'00'")


def listing_text_not_utf8(connection: sqlite3.Connection) -> None:
    """The listing's snapshot: the text it printed, not UTF-8; its layout another type."""
    connection.execute("UPDATE listing SET text = CAST(x'ff' AS TEXT), layout = CAST(x'c3' AS TEXT)")


def turn_id_text_key(connection: sqlite3.Connection) -> None:
    _retyped(connection, "turns", "id INTEGER PRIMARY KEY", "id TEXT PRIMARY KEY", copy=False)
    _unindexed(connection)


CASES: dict[str, Callable[[sqlite3.Connection], None]] = {
    case.__name__: case
    for case in (
        forging_triggers,
        forging_view,
        spinning_trigger,
        spinning_view,
        spans_not_json,
        checked_ns_declared_text,
        checked_ns_value_text,
        conversation_integer_key,
        plan_extra_key,
        plan_wrong_type,
        check_report_not_json,
        check_report_extra_key,
        check_report_wrong_types,
        check_report_unknown_reason,
        turn_id_text_key,
        text_not_utf8,
        turns_text_not_utf8,
        plans_text_not_utf8,
        listing_snapshot_garbled,
        listing_text_not_utf8,
    )
}
HEALED = {"text_not_utf8", "turns_text_not_utf8", "plans_text_not_utf8", "listing_text_not_utf8"}
"""Cases whose bad rows the first round replaces: the second round uses the cache again, without a note."""
UNUSED = re.compile(r"without the (workspace cache|index file|stored plans)")


@pytest.fixture(scope="module")
def tally() -> Iterator[Tally]:
    tally = Tally(
        "crafted cache database: an extra trigger rewriting titles and plans, a view forging plans, a trigger and "
        "a view running a recursive query that never ends, `turns.spans` not JSON, `checked_ns` declared or "
        "stored as text, `conversation INTEGER PRIMARY KEY`, `turns.id TEXT PRIMARY KEY`, stored plans with an "
        "extra key or a wrongly typed plan row, `check --all`'s stored reports not JSON, with an extra key, values "
        "of other types or an unknown reason, text that is not UTF-8 in the rows, the turn rows, the stored plans "
        "and the listing's snapshot, a snapshot that does not decode",
        "each command's exit and stdout those of the clean run, twice; no traceback; no hang (60 s guard); rows "
        "of text that is not UTF-8 replaced, the cache used again",
    )
    yield tally
    tally.publish(f"{tally.runs} command runs: {len(COMMANDS)} commands x 2 rounds after each crafted database")


def _run_all(workspace: Path, env: dict[str, str]) -> list[tuple[int, str, str]]:
    outcomes = []
    for command in COMMANDS:
        options = () if command[0] == "--format" else ("--format", "json")
        done = run_turnmark(workspace, env, (*options, *command), TIMEOUT)
        outcomes.append((done.returncode, done.stdout, done.stderr))
    return outcomes


@pytest.mark.parametrize("case", list(CASES))
def test_a_crafted_database_is_rebuilt_not_believed(
    case: str, *, workspace: Path, user_data: Path, tmp_path: Path, tally: Tally
) -> None:
    env = isolated_env(tmp_path / "home")
    env["JP_USER_DATA_DIR"] = str(user_data)
    time.sleep(2.1)  # the copied files' identity settles, so the clean run stores its plans
    clean = _run_all(workspace, env)
    database = cache_folder(tmp_path / "home", workspace) / "cache.sqlite3"
    assert database.is_file()
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        CASES[case](connection)
    finally:
        connection.close()
    problems = []
    for round_ in (1, 2):
        tally.runs += len(COMMANDS)
        for command, before, after in zip(COMMANDS, clean, _run_all(workspace, env), strict=True):
            what = f"{case}, round {round_}: turnmark {' '.join(command)}"
            if "Traceback" in after[2]:
                problems.append(f"{what}: a traceback\n{after[2]}")
            elif after[0] != before[0]:
                problems.append(f"{what}: exit {after[0]}, clean {before[0]}\n{after[2]}")
            elif after[1] != before[1]:
                problems.append(f"{what}: stdout differs from the clean run's\n{after[1]}\n{after[2]}")
            elif round_ == 2 and case in HEALED and UNUSED.search(after[2]):
                problems.append(f"{what}: the cache is still not used\n{after[2]}")
    tally.case(case, problems)
    assert not problems, "\n".join(problems)

"""``find`` queries an attacker (or a typo) would write: catastrophic regexes, thousands of prefix terms, a
limit past SQLite's integers, a date with an offset (issue 34, findings 8 and 9).

Real ``turnmark`` processes on a copy of the corpus (or the fixtures) with one request of 5,000 ``a``; a
regex must be answered within 5 s (the subprocess's timeout: before RE2, each ran past 30 s).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, corpus_root
from tests.reliability.processes import isolated_env, run_turnmark
from tests.support.copies import writable_copy

PROBE = (
    "hostile queries: `find --regex` with `(\\w+\\s?)+$`, `(.*,)*x`, `(a+)+$` on the corpus plus a 5,000-`a` "
    "request; backreferences and lookarounds; more prefix terms than the bound; `--limit 99999999999999999999`; "
    "`--since` with an offset (issue 34, findings 8 and 9)",
    "{cases} command runs",
    "each regex answered within 5 s (RE2, linear time); unsupported syntax, too many terms (more than 64) and a "
    "limit above 1,000,000 a one-line error with status 2; an offset converted to UTC",
)
"""This module's row in docs/reliability.md (``conftest.py``)."""

CATASTROPHIC = (r"(\w+\s?)+$", r"(.*,)*x", r"(a+)+$")


@pytest.fixture
def searched(tmp_path: Path) -> Path:
    """The corpus (or the fixture workspace) with a conversation whose request is 5,000 ``a`` and a ``!``."""
    source = corpus_root() if (corpus_root() / ".jp" / "conversations").is_dir() else FIXTURES
    root = tmp_path / "ws"
    writable_copy(source / ".jp" / "conversations", root / ".jp" / "conversations")
    folder = root / ".jp" / "conversations" / "17990000000-many-a"
    folder.mkdir()
    entries = [
        {"timestamp": "2026-05-20 08:00:00.0", "type": "turn_start"},
        {"timestamp": "2026-05-20 08:00:00.1", "type": "chat_request", "content": "a" * 5000 + "!"},
        {"timestamp": "2026-05-20 08:00:01.0", "type": "chat_response", "message": "aaaa, " * 800},
    ]
    (folder / "events.json").write_text(json.dumps(entries, indent=2))
    (folder / "base_config.json").write_text("{}")
    return root


def find(workspace: Path, home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return run_turnmark(workspace, isolated_env(home), ("find", *args), timeout)


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_a_catastrophic_regex_is_answered_in_linear_time(searched: Path, tmp_path: Path, pattern: str) -> None:
    result = find(searched, tmp_path / "home", "--regex", "--in", "all", "-o", "count", pattern, timeout=5)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("pattern", [r"(a)\1", r"lock(?=ing)", r"(?<!un)lock"])
def test_backreferences_and_lookarounds_are_a_one_line_error(searched: Path, tmp_path: Path, pattern: str) -> None:
    result = find(searched, tmp_path / "home", "--regex", pattern)
    assert result.returncode == 2
    assert result.stderr.startswith("error: regex: "), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert "no backreferences or lookarounds" in result.stderr


def test_a_query_of_too_many_terms_is_a_one_line_error_naming_the_bound(searched: Path, tmp_path: Path) -> None:
    result = find(searched, tmp_path / "home", " ".join(["a*"] * 5000))
    assert result.returncode == 2
    assert result.stderr == "error: query: more than 64 terms at position 193 (search for fewer words)\n"


def test_a_limit_past_sqlite_integers_is_a_usage_error(searched: Path, tmp_path: Path) -> None:
    result = find(searched, tmp_path / "home", "lock", "--limit", "99999999999999999999")
    assert result.returncode == 2
    assert result.stderr == ("error: --limit must be less than or equal to 1000000 (see 'turnmark find --help')\n"), (
        result.stderr
    )


def test_since_with_an_offset_is_converted_to_utc(workspace: Path, tmp_path: Path) -> None:
    """21:00+05:00 is 16:00 UTC: a turn at 17:00 UTC is found, as with the same moment written in UTC."""
    folder = workspace / ".jp" / "conversations" / "17990000001-offset"
    folder.mkdir()
    entries = [
        {"timestamp": "2026-03-05 17:00:00.0", "type": "turn_start"},
        {"timestamp": "2026-03-05 17:00:00.1", "type": "chat_request", "content": "zanzibar offsets"},
    ]
    (folder / "events.json").write_text(json.dumps(entries, indent=2))
    (folder / "base_config.json").write_text("{}")
    home = tmp_path / "home"
    with_offset = find(workspace, home, "zanzibar", "-o", "count", "--since", "2026-03-05T21:00+05:00")
    in_utc = find(workspace, home, "zanzibar", "-o", "count", "--since", "2026-03-05T16:00")
    later = find(workspace, home, "zanzibar", "-o", "count", "--since", "2026-03-05T18:00")
    assert (with_offset.stdout, in_utc.stdout, later.stdout) == ("1\n", "1\n", "0\n"), with_offset.stderr

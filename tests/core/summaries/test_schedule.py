"""The watcher's step after a catch-up, with plain values: give up, back off, retry a lock, wait to settle, forget."""

from typing import Any

import pytest

from turnmark.core.summaries.schedule import (
    BACKOFF_FIRST,
    BACKOFF_MAX,
    LOCKED_RETRY,
    Action,
    Notice,
    Step,
    after_exception,
    next_step,
)

QUIET: dict[str, Any] = {
    "error": None,
    "conversation_problem": False,
    "skipped": None,
    "locked": False,
    "repeated": False,
    "written": False,
    "settled": True,
    "backoff": 0.0,
    "once": False,
    "last_change": 100.0,
    "settle": 5.0,
    "now": 110.0,
}
REFUSED = "ollama/qwen3:4b: connection refused"
LOCKED = "locked by pid 42 (a running jp?); retried next time"


def step(**changes: Any) -> Step:
    return next_step(**{**QUIET, **changes})


def test_the_constants() -> None:
    assert (LOCKED_RETRY, BACKOFF_FIRST, BACKOFF_MAX) == (2.0, 5.0, 300.0)


@pytest.mark.parametrize("once", [False, True])
def test_a_broken_conversation_is_given_up_until_it_changes(once: bool) -> None:
    error = "events.json is not valid JSON"
    assert step(error=error, conversation_problem=True, backoff=10.0, once=once) == Step(
        Action.GIVE_UP,
        10.0,
        notices=(Notice("given_up", f"not summarized until it changes: {error}", {"error": error}),),
    )


@pytest.mark.parametrize(("backoff", "longer"), [(0.0, 5.0), (5.0, 10.0), (10.0, 20.0), (160.0, 300.0), (300.0, 300.0)])
def test_an_error_backs_off_doubling_from_the_first_up_to_the_most(backoff: float, longer: float) -> None:
    assert step(error=REFUSED, backoff=backoff) == Step(
        Action.BACK_OFF,
        longer,
        longer,
        (
            Notice(
                "retrying",
                f"not summarized, retrying in {longer:.0f}s: {REFUSED}",
                {"error": REFUSED, "retry_in_seconds": longer},
            ),
        ),
    )


def test_a_skip_for_an_earlier_failure_backs_off_and_names_the_skip() -> None:
    skipped = "ollama/qwen3:4b cannot be reached (see the error above); not tried again in this run"
    result = step(skipped=skipped, repeated=True, backoff=5.0)
    assert (result.action, result.backoff, result.delay) == (Action.BACK_OFF, 10.0, 10.0)
    assert result.notices == (
        Notice("retrying", f"not summarized, retrying in 10s: {skipped}", {"error": skipped, "retry_in_seconds": 10.0}),
    )


def test_a_repeated_error_is_named_by_its_skip() -> None:
    [notice] = step(error=REFUSED, skipped="tried earlier", repeated=True).notices
    assert notice.message == "not summarized, retrying in 5s: tried earlier"


def test_once_reports_an_error_and_leaves_the_back_off() -> None:
    assert step(error=REFUSED, backoff=5.0, once=True) == Step(
        Action.LEAVE, 5.0, notices=(Notice("not_summarized", f"not summarized: {REFUSED}", {"error": REFUSED}),)
    )


@pytest.mark.parametrize("repeated", [False, True])
def test_once_says_nothing_more_about_a_skip_or_a_repeated_error(repeated: bool) -> None:
    error = REFUSED if repeated else None
    assert step(error=error, skipped="tried earlier", repeated=repeated, once=True) == Step(Action.LEAVE, 0.0)


@pytest.mark.parametrize("once", [False, True])
def test_a_locked_conversation_is_retried_soon_and_the_back_off_ends(once: bool) -> None:
    result = step(skipped=LOCKED, locked=True, written=True, backoff=40.0, once=once)
    assert result == Step(Action.LOCKED, 0.0, LOCKED_RETRY)


@pytest.mark.parametrize(("now", "delay"), [(102.0, 3.0), (104.5, 0.5), (120.0, 0.0)])
def test_an_unsettled_turn_is_looked_at_once_it_has_rested(now: float, delay: float) -> None:
    result = step(settled=False, written=True, backoff=20.0, now=now)
    assert result == Step(Action.SETTLE, 0.0, delay)


@pytest.mark.parametrize("written", [False, True])
def test_a_settled_conversation_is_forgotten_remembering_turnmarks_own_write(written: bool) -> None:
    assert step(written=written, backoff=20.0) == Step(Action.FORGET, 0.0, remember_written=written)


def test_a_catch_up_that_raised_is_retried_after_the_first_back_off_keeping_the_back_off() -> None:
    assert after_exception("boom", 20.0) == Step(
        Action.BACK_OFF, 20.0, BACKOFF_FIRST, (Notice("failed", "failed: boom", {"error": "boom"}),)
    )

"""A Ctrl-C that cut a database call short surfaces as the error of its clean-up; a fallback must end the run
(``reraise_interrupt``), not go on without the cache (found by Ctrl-C at random moments of ``find``)."""

from __future__ import annotations

import sqlite3

import pytest

from turnmark.shell.errors import reraise_interrupt


def _clean_up_error_after(first: BaseException) -> sqlite3.Error:
    try:
        try:
            raise first
        except BaseException:
            raise sqlite3.OperationalError("no such savepoint: record") from None
    except sqlite3.Error as error:
        return error


def test_an_error_raised_while_a_ctrl_c_was_handled_is_the_ctrl_c() -> None:
    error = _clean_up_error_after(KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        reraise_interrupt(error)


def test_an_error_of_its_own_is_left_to_the_fallback() -> None:
    reraise_interrupt(_clean_up_error_after(ValueError("disk I/O error")))
    reraise_interrupt(sqlite3.OperationalError("database is locked"))

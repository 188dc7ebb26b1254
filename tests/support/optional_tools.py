"""Tests that need a program outside Python (headless Chromium, vim in tmux): skipped by name when it is missing,
saying how to run them; under ``just test-all`` (``TURNMARK_REQUIRE_ALL``) a missing program fails the run."""

from __future__ import annotations

import os

import pytest

RUN_ALL = "`just test-all` (installs it from Debian's packages, as root)"


def needs(available: bool, what: str) -> pytest.MarkDecorator:
    """A mark for a test module or test that cannot run without ``what``."""
    if not available and os.environ.get("TURNMARK_REQUIRE_ALL"):
        pytest.fail(f"{what} is missing, and just test-all requires every test to run", pytrace=False)
    return pytest.mark.skipif(not available, reason=f"{what} is missing; {RUN_ALL} runs this test")

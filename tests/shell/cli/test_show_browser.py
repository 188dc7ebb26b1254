"""The HTML page of ``turnmark show`` in a real browser: headless Chromium, driven over the DevTools protocol.

The page loads with no console message and asks for nothing but itself, its table of contents has one
entry per turn and every entry reaches its turn, no script from the hostile conversation runs (each
would rename the page: ``document.title='PWNED-…'``) even with the Content-Security-Policy taken out,
and the screenshot is a page, not a blank.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.shell.cli.test_show import ENV, HOSTILE, STORAGE
from tests.support.browser import CHROMIUM, Browser, foreign_requests, grey_levels
from tests.support.optional_tools import needs
from turnmark.core.text.terminal import visible
from turnmark.shell.cli.main import app

pytestmark = [
    pytest.mark.slow,
    needs(CHROMIUM is not None, "headless Chromium"),
]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    running = Browser(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield running
    finally:
        running.close()


def written(workspace: Path, conversation: str, target: Path) -> dict[str, object]:
    """Write the conversation's page to ``target``; its JSON view (title, turns) for the checks."""
    for args in (("-o", str(target), "--reasoning"), ("--format", "json")):
        result = CliRunner().invoke(app, ["--workspace", str(workspace), "show", conversation, *args], env=ENV)
        assert result.exit_code == 0, result.stderr
    document: dict[str, object] = json.loads(result.stdout)
    return document


NO_SCRIPT_RAN = """(() => ({
  title: document.title,
  scripts: document.querySelectorAll('script, img, iframe, object, embed, frame, link').length,
  handlers: [...document.querySelectorAll('*')].flatMap(e => [...e.attributes].map(a => a.name))
    .filter(name => name.startsWith('on')),
  foreignLinks: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))
    .filter(href => !/^(#|https?:|mailto:)/.test(href)),
  linksWithoutRel: [...document.querySelectorAll('a[href^="http"], a[href^="mailto"]')]
    .filter(a => a.rel !== 'noopener noreferrer').length,
  hidden: getComputedStyle(document.body).display === 'none',
}))()"""

CONTENTS_REACH_TURNS = """(() => [...document.querySelectorAll('nav.toc a')].map(link => {
  const id = link.getAttribute('href').slice(1);
  link.click();
  const target = document.getElementById(id);
  return {id, hash: location.hash, found: !!target && target.tagName === 'SECTION',
          top: target ? Math.round(target.getBoundingClientRect().top) : null, scrolled: window.scrollY};
}))()"""


def window(width: int, height: int) -> dict[str, object]:
    return {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}


def load(browser: Browser, page: Path) -> None:
    browser.events.clear()
    browser.proxy.asked.clear()
    browser.open(page.as_uri())
    browser.settle(0.5)


@pytest.mark.parametrize("conversation", [STORAGE, HOSTILE])
def test_the_page_loads_clean_and_fetches_nothing(
    browser: Browser, show_workspace: Path, tmp_path: Path, conversation: str
) -> None:
    page = tmp_path / "page.html"
    view = written(show_workspace, conversation, page)
    load(browser, page)
    assert browser.console_problems() == []
    assert browser.requests() == [page.as_uri()]
    assert foreign_requests(browser.proxy.asked) == []
    state = browser.evaluate(NO_SCRIPT_RAN)
    conversation_view = view["conversation"]
    assert isinstance(conversation_view, dict)
    assert state == {
        "title": " ".join(visible(str(conversation_view["title"])).split()),
        "scripts": 0,
        "handlers": [],
        "foreignLinks": [],
        "linksWithoutRel": 0,
        "hidden": False,
    }


def test_the_contents_has_one_entry_per_turn_and_each_reaches_its_turn(
    browser: Browser, show_workspace: Path, tmp_path: Path
) -> None:
    page = tmp_path / "storage.html"
    view = written(show_workspace, STORAGE, page)
    load(browser, page)
    browser.call("Emulation.setDeviceMetricsOverride", window(1280, 500))
    reached = browser.evaluate(CONTENTS_REACH_TURNS)
    turns = view["turns"]
    assert isinstance(turns, list)
    assert [entry["id"] for entry in reached] == [turn["anchor"] for turn in turns]
    for entry in reached:
        assert entry["found"], entry
        assert entry["hash"] == f"#{entry['id']}", entry
        assert entry["top"] == 0 or entry["scrolled"] > 0, entry
    assert reached[-1]["scrolled"] > reached[0]["scrolled"]


def test_no_content_script_runs_even_without_the_content_security_policy(
    browser: Browser, show_workspace: Path, tmp_path: Path
) -> None:
    """Escaping alone stops the hostile conversation: the same page with its CSP meta tag removed."""
    page = tmp_path / "hostile.html"
    written(show_workspace, HOSTILE, page)
    text = page.read_text(encoding="utf-8")
    without_policy, removed = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>\n', "", text)
    assert removed == 1
    page.write_text(without_policy, encoding="utf-8")
    load(browser, page)
    state = browser.evaluate(NO_SCRIPT_RAN)
    assert not str(state["title"]).startswith("PWNED")
    assert (state["scripts"], state["handlers"], state["foreignLinks"]) == (0, [], [])
    assert browser.console_problems() == []
    assert browser.requests() == [page.as_uri()]
    assert not [event for event in browser.events if event["method"] == "Page.javascriptDialogOpening"]


def test_the_screenshot_is_a_page_not_a_blank(browser: Browser, show_workspace: Path, tmp_path: Path) -> None:
    page = tmp_path / "storage.html"
    written(show_workspace, STORAGE, page)
    load(browser, page)
    browser.call("Emulation.setDeviceMetricsOverride", window(1280, 900))
    levels = grey_levels(browser.screenshot())
    mean = sum(levels) / len(levels)
    variance = sum((level - mean) ** 2 for level in levels) / len(levels)
    assert len(set(levels)) > 20
    assert variance > 100, (mean, variance)


def test_dark_mode_follows_the_system_setting(browser: Browser, show_workspace: Path, tmp_path: Path) -> None:
    page = tmp_path / "storage.html"
    written(show_workspace, STORAGE, page)
    load(browser, page)
    background = "getComputedStyle(document.body).backgroundColor"
    browser.call("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
    light = browser.evaluate(background)
    browser.call("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    dark = browser.evaluate(background)
    browser.call("Emulation.setEmulatedMedia", {"features": []})
    assert (light, dark) == ("rgb(255, 255, 255)", "rgb(13, 17, 23)")

"""``turnmark show`` on fixtures/show-workspace: snapshots of text (no colour), md, html and json, and the
rules every format keeps with hostile content (no raw HTML, script, handler, foreign link or fetch)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from turnmark.core.rendering.shown import ShowOptions, TurnSelection
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.output import styled
from turnmark.shell.storage.conversations import read_conversation
from turnmark.shell.storage.selection import pick_conversation
from turnmark.shell.usecases import showing

ENV = {"COLUMNS": "100", "TERMINAL_WIDTH": "100", "NO_COLOR": "1"}
STORAGE = "17820000010"
HOSTILE = "17820000020"
CONVERSATIONS = (STORAGE, HOSTILE)


def show(workspace: Path, *args: str, code: int = 0) -> tuple[str, str]:
    result = CliRunner().invoke(
        app, ["--workspace", str(workspace), "show", *args], obj=Settings(new_id=sequential_ids()), env=ENV
    )
    assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
    return result.stdout, result.stderr.replace(str(workspace), "<ws>")


@pytest.mark.parametrize("conversation", CONVERSATIONS)
@pytest.mark.parametrize("output_format", ["text", "md", "html", "json"])
def test_every_format_of_every_fixture(
    show_workspace: Path, snapshot: SnapshotAssertion, conversation: str, output_format: str
) -> None:
    out, err = show(show_workspace, conversation, "--format", output_format, "--reasoning")
    assert err == ""
    assert re.sub("<style>\n.*</style>", "<style>(the page style)</style>", out, flags=re.DOTALL) == snapshot


def test_the_page_style_has_light_and_dark_code_colours(show_workspace: Path) -> None:
    out, _ = show(show_workspace, STORAGE, "--format", "html")
    style = out[out.index("<style>") : out.index("</style>")]
    assert style.count("@media (prefers-color-scheme: dark)") == 2
    assert ".hl .k " in style


def test_text_defaults_to_tool_names_and_no_reasoning(show_workspace: Path, snapshot: SnapshotAssertion) -> None:
    out, _ = show(show_workspace, STORAGE, "--turn", "0")
    assert "fs_read_file crates/jp_storage/src/lock.rs ✓ 1.9 KiB" in out
    assert "Reasoning" not in out
    assert '"path"' not in out
    assert out == snapshot


def test_tools_full_in_text_shows_arguments_and_cut_output(show_workspace: Path, snapshot: SnapshotAssertion) -> None:
    out, _ = show(show_workspace, STORAGE, "--turns", "1-s2turn0", "--tools", "full")
    assert "cut: " in out
    assert out == snapshot


def test_json_shape(show_workspace: Path) -> None:
    out, _ = show(show_workspace, STORAGE, "--format", "json", "--last", "2")
    document = json.loads(out)
    assert list(document) == ["conversation", "total_turns", "options", "turns"]
    assert document["total_turns"] == 4
    assert [turn["id"] for turn in document["turns"]] == ["s2turn0", "s3turn0"]
    events = document["turns"][0]["events"]
    assert [(event["type"], event["excluded"] is not None) for event in events] == [
        ("request", False),
        ("message", True),
        ("tool", False),
        ("inquiry", False),
        ("message", False),
    ]
    assert events[1]["excluded"] == {"request_id": "gone000", "reason": "missing_target", "by_closure": False}
    assert events[2]["tool"]["output"] == "applied 1 hunk to crates/jp_storage/src/lock.rs"
    assert events[3]["answer"] is True
    assert document["turns"][0]["compaction"]["notes"] == [
        "compacted: the model is not sent this turn's reasoning",
        "compacted: the model is not sent the output of this turn's tool calls",
    ]


def test_json_keeps_hostile_strings_as_written(show_workspace: Path) -> None:
    out, _ = show(show_workspace, HOSTILE, "--format", "json")
    document = json.loads(out)
    assert document["conversation"]["title"].endswith("\x1b[31mtitle")
    assert "\x1b[2J" in document["turns"][0]["events"][0]["content"]
    assert "\x1b" not in out


def test_the_global_format_option_applies(show_workspace: Path) -> None:
    out, _ = show(show_workspace, STORAGE, "--turn", "s3turn0", "--format", "json")
    assert json.loads(out)["turns"][0]["index"] == 3
    result = CliRunner().invoke(
        app, ["--workspace", str(show_workspace), "--format", "json", "show", STORAGE, "--turn", "3"], env=ENV
    )
    assert json.loads(result.stdout)["turns"][0]["index"] == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--turn", "zzz9999"), "error: no turn 'zzz9999' (give a turn's event_id or its number, as 'turnmark turns'"),
        (("--turns", "3-1"), "error: --turns 3-1: turn '3' comes after turn '1'"),
        (("--turns", "3"), "error: --turns 3: give two turns as A-B (IDs or numbers)"),
        (("--last", "0"), "error: --last must be 1 or more, not 0"),
        (("--last", "2", "--turn", "1"), "error: give one of --turn, --last and --turns"),
        (("--format", "pdf"), "error: --format must be text, md, html or json (see 'turnmark show --help')"),
        (("--tools", "some"), "error: --tools must be none, names, args or full (see 'turnmark show --help')"),
    ],
)
def test_bad_choices_are_one_line_and_exit_2(show_workspace: Path, args: tuple[str, ...], message: str) -> None:
    out, err = show(show_workspace, STORAGE, *args, code=2)
    assert out == ""
    assert err.startswith(message)
    assert err.count("\n") == 1


def test_output_file_takes_its_format_from_the_suffix(show_workspace: Path, tmp_path: Path) -> None:
    for name, start in (("talk.html", "<!DOCTYPE html>"), ("talk.md", "# Read the storage crate"), ("talk.json", "{")):
        out, _ = show(show_workspace, STORAGE, "-o", str(tmp_path / name))
        assert out == ""
        assert (tmp_path / name).read_text(encoding="utf-8").startswith(start)
    show(show_workspace, STORAGE, "-o", str(tmp_path / "talk.txt"))
    assert (tmp_path / "talk.txt").read_text(encoding="utf-8").startswith("Read the storage crate  jp-c17820000010")


def test_output_file_is_never_written_through_a_link(show_workspace: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (tmp_path / "out.html").symlink_to(victim)
    _out, err = show(show_workspace, STORAGE, "-o", str(tmp_path / "out.html"), code=2)
    assert "symbolic link" in err
    assert victim.read_text() == "keep me"


# the rules each document keeps ------------------------------------------------------------------------


class Elements(HTMLParser):
    """Every start tag with its attributes, every id, and the text of <title>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if attributes.get("id"):
            self.ids.append(str(attributes["id"]))


@pytest.mark.parametrize("conversation", CONVERSATIONS)
def test_the_html_page_is_inert_and_self_contained(show_workspace: Path, conversation: str) -> None:
    page, _ = show(show_workspace, conversation, "--format", "html", "--reasoning")
    parser = Elements()
    parser.feed(page)
    tags = [tag for tag, _ in parser.tags]
    assert not {"script", "img", "iframe", "object", "embed", "link", "form", "input", "base", "svg"} & set(tags)
    assert tags.count("style") == 1
    for tag, attributes in parser.tags:
        assert not [name for name in attributes if name.startswith("on")], (tag, attributes)
        assert not {"src", "srcset", "style"} & set(attributes), (tag, attributes)
        href = attributes.get("href")
        if href is not None:
            assert href.startswith(("#", "http://", "https://", "mailto:")), href
            if not href.startswith("#"):
                assert attributes.get("rel") == "noopener noreferrer", attributes
    assert "default-src 'none'" in page
    assert len(parser.ids) == len(set(parser.ids)), "every anchor is unique"
    targets = {
        str(attributes["href"])[1:] for _, attributes in parser.tags if str(attributes.get("href", "")).startswith("#")
    }
    assert targets <= set(parser.ids), "every link inside the page reaches its anchor"


def test_the_html_contents_has_one_entry_per_turn(show_workspace: Path) -> None:
    page, _ = show(show_workspace, STORAGE, "--format", "html")
    contents = page[page.index('<nav class="toc"') : page.index("</nav>")]
    assert contents.count("<li>") == 4
    assert [f'id="turn-s{n}turn0"' in page for n in range(4)] == [True] * 4


OUR_HTML = (
    r'<a id="(turn|event)-[a-z0-9_]+">(</a>)?',
    r"</a>",
    r"<details>",
    r"</details>",
    r"<summary>.*</summary>",
)


@pytest.mark.parametrize("conversation", CONVERSATIONS)
def test_markdown_carries_no_html_but_turnmarks_own(show_workspace: Path, conversation: str) -> None:
    """Parsed as a viewer that renders raw HTML would, the only HTML is the anchors and <details> turnmark
    writes; every fence closes where it should (the turn after a hostile message still starts a turn)."""
    document, _ = show(show_workspace, conversation, "--format", "md", "--reasoning")
    tokens = MarkdownIt("commonmark").parse(document)
    raw = [token for token in tokens if token.type == "html_block"]
    raw += [child for token in tokens if token.children for child in token.children if child.type == "html_inline"]
    for token in raw:
        for line in token.content.strip().splitlines():
            assert any(re.fullmatch(pattern, line.strip()) for pattern in OUR_HTML), line
            assert not re.search("<(script|img)", line, re.IGNORECASE), line
    headings = [
        tokens[i + 1].content for i, token in enumerate(tokens) if token.type == "heading_open" and token.tag == "h2"
    ]
    assert [heading.split(" (")[0] for heading in headings[1:]] == [f"Turn {n}" for n in range(len(headings) - 1)]
    links = [child for token in tokens if token.children for child in token.children if child.type == "link_open"]
    assert all(str(link.attrGet("href")).startswith(("#", "http://", "https://", "mailto:")) for link in links)


def test_colour_text_carries_no_escape_but_colours(show_workspace: Path) -> None:
    """The terminal's text with colour on: content escapes are shown, only SGR codes are raw."""
    ref = pick_conversation(show_workspace, HOSTILE, lambda _: None)
    loaded = read_conversation(ref, sequential_ids())
    options = ShowOptions(reasoning=True, tools="full")
    view = showing.shown_conversation(loaded.stream, {"id": "x", "title": loaded.title}, TurnSelection(), options)
    text = styled(showing.rendered(view.unwrap(), "text", width=90, color=True))
    assert "\x1b[" in text, "colour is on"
    without_colours = re.sub("\x1b\\[[0-9;]*m", "", text)
    assert not [c for c in without_colours if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0]
    assert "\\u{1b}[2J" in without_colours


def test_a_multi_line_question_renders_its_markdown_and_shows_no_raw_fence(show_workspace: Path) -> None:
    folder = next((show_workspace / ".jp" / "conversations").glob(f"{STORAGE}-*"))
    events = json.loads((folder / "events.json").read_text())
    ts = events[-1]["timestamp"]
    patch = "Do you want to apply the following patch?\n\n```diff\n--- a/lib.rs\n+++ b/lib.rs\n+pub mod trash;\n```"
    events += [
        {
            "timestamp": ts,
            "type": "inquiry_request",
            "id": "call_9.apply_changes",
            "source": {"source": "tool", "name": "fs_modify_file"},
            "question": {"text": patch, "answer_type": {"type": "boolean"}},
        },
        {"timestamp": ts, "type": "inquiry_response", "id": "call_9.apply_changes", "answer": True},
    ]
    (folder / "events.json").write_text(json.dumps(events, indent=2))
    out, _ = show(show_workspace, STORAGE)
    assert "+pub mod trash;" in out
    assert not [line for line in out.splitlines() if line.strip().startswith("```")]
    assert "→ yes" in out

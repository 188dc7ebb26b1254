"""The reader's view with plain values: turns chosen, tool items, exclusion marks, overlay notes, and the
guards the Markdown and HTML documents keep."""

from __future__ import annotations

from dataclasses import replace

import pytest

from turnmark.core.rendering.html_page import allowed_link, markdown_html
from turnmark.core.rendering.markdown_export import code_span, guarded, inline
from turnmark.core.rendering.shown import (
    ShownTool,
    ShowOptions,
    TurnSelection,
    anchor,
    cut,
    fence,
    select_turns,
    show_turns,
)
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.payloads import ChatRequest, ChatResponse, Compaction, ToolCallRequest, ToolCallResponse
from turnmark.core.text.wording import byte_size

TS = "2026-03-05 14:02:00.0"


def conversation() -> ConversationStream:
    stream = ConversationStream.empty({}, new_id=sequential_ids())
    stream = stream.start_turn(ChatRequest(TS, "Read the lock"))
    stream = stream.extend(
        [
            ChatResponse(TS, "reasoning", "Read it first."),
            ToolCallRequest(TS, "c1", "fs_read_file", {"path": "src/lock.rs", "why": "look"}),
            ToolCallResponse(TS, "c1", "x" * 2150, False),
            ChatResponse(TS, "message", "Here it is."),
        ]
    )
    stream = stream.start_turn(ChatRequest(TS, "Run the tests")).push(ToolCallRequest(TS, "c2", "cargo_test", {}))
    return stream.push(Compaction.new(TS, 0, 0, reasoning_strip=True))


def test_a_call_and_its_result_are_one_item_and_reasoning_waits_for_the_option() -> None:
    stream = conversation()
    plain, with_reasoning = (
        show_turns(stream, stream.turns(), ShowOptions(reasoning=reasoning)) for reasoning in (False, True)
    )
    assert [event.kind for event in plain[0].events] == ["request", "tool", "message"]
    assert [event.kind for event in with_reasoning[0].events] == ["request", "reasoning", "tool", "message"]
    tool = plain[0].events[1].tool
    assert tool is not None
    assert tool.line == "fs_read_file src/lock.rs ✓ 2.1 KiB"
    pending = plain[1].events[1].tool
    assert pending is not None
    assert pending.line == "cargo_test … no result"
    assert [event.kind for event in show_turns(stream, stream.turns(), ShowOptions(tools="none"))[0].events] == [
        "request",
        "message",
    ]


def test_overlay_notes_and_the_excluded_answer() -> None:
    stream = conversation()
    entries = list(stream.entries)
    entries[5] = replace(entries[5], request_id="gone000")
    shown = show_turns(stream.with_entries(entries), stream.turns(), ShowOptions())
    assert shown[0].notes == ("compacted: the model is not sent this turn's reasoning",)
    assert shown[1].notes == ()
    answer = shown[0].events[-1]
    assert answer.excluded is not None
    assert answer.excluded.text == (
        "left out of what the model sees: request_id 'gone000' does not resolve "
        "(missing_target: no entry has this event_id; was the request deleted?)"
    )
    assert shown[0].heading == "Turn 0 (e000001) · 2026-03-05 14:02 · Read the lock"


@pytest.mark.parametrize(
    ("selection", "chosen"),
    [
        (TurnSelection(), [0, 1, 2, 3]),
        (TurnSelection(turn="2"), [2]),
        (TurnSelection(last=9), [0, 1, 2, 3]),
        (TurnSelection(span="1-3"), [1, 2, 3]),
        (TurnSelection(span=" 2 - 2 "), [2]),
    ],
)
def test_turn_selection(selection: TurnSelection, chosen: list[int]) -> None:
    stream = ConversationStream.empty({}, new_id=sequential_ids())
    for text in "abcd":
        stream = stream.start_turn(ChatRequest(TS, text))
    assert [turn.index for turn in select_turns(stream.turns(), selection).unwrap()] == chosen


def test_sizes_cuts_fences_and_anchors() -> None:
    assert (byte_size(0), byte_size(2150), byte_size(3 * 1024 * 1024)) == ("0 B", "2.1 KiB", "3.0 MiB")
    head, said = cut("a" * 5000)
    assert (len(head), said) == (4000, "cut: 1,000 more characters not shown")
    assert fence("````` in ``` here") == "``````"
    assert anchor("turn", "AZ az 09") == "turn-_41__5a__20_az_20_09"
    tool = ShownTool("c", "run", {"n": 1, "command": "ls -la\nrm"}, None, False, None)
    assert tool.target == "ls -la rm"


@pytest.mark.parametrize(
    ("written", "kept"),
    [
        ("plain *text*", "plain *text*"),
        ("<b>bold</b>", "&lt;b>bold&lt;/b>"),
        ("`<b>` stays code", "`<b>` stays code"),
        ("``a ` <b>`` and <i>", "``a ` <b>`` and &lt;i>"),
        ("    <indented code>", "    <indented code>"),
        ("[x](javascript:alert(1))", "[x]\\(javascript:alert(1))"),
        ("[x](https://example.org) <https://example.org>", "[x](https://example.org) <https://example.org>"),
        ("[ref]: javascript:alert(1)", "\\[ref]: javascript:alert(1)"),
        ("```\n<b>\n```\n<b>", "```\n<b>\n```\n&lt;b>"),
        ("~~~~\nopen\n~~~", "~~~~\nopen\n~~~\n~~~~"),
        ("````md\n```\ninner\n```\n````", "````md\n```\ninner\n```\n````"),
        ("ESC \x1b[2J", "ESC \\u{1b}[2J"),
    ],
)
def test_guarded_markdown(written: str, kept: str) -> None:
    assert guarded(written) == kept


def test_inline_text_and_code_spans() -> None:
    assert inline("Label </a>\n& [x](y)") == "Label \\</a\\> \\& \\[x\\](y)"
    assert code_span("``") == "``` `` ```"


def test_html_links_images_and_raw_html() -> None:
    assert [allowed_link(url) for url in ("HTTPS://a", "mailto:x@y", "ftp://a", "data:text/html,x", "#a")] == [
        True,
        True,
        False,
        False,
        False,
    ]
    rendered = markdown_html("<img src=x onerror=alert(1)> [a](vbscript:x) ![i](data:image/png;base64,AA)")
    assert "<img" not in rendered
    assert "href" not in rendered
    assert markdown_html("```python\nprint('<x>')\n```").startswith('<pre class="hl"><code>')
    assert "&lt;x&gt;" in markdown_html("```nosuchlanguage\n<x>\n```")

"""Plan injection: what a conversation holds cannot add a line to the ``edit -i`` plan (issue 34, finding 10).

A ``turn_start`` whose ``event_id`` holds a newline and a file name was written raw into its ``# Turn``
header, and the plan's parser then read a second, forged line; the unchanged plan was invalid.
"""

from __future__ import annotations

import pytest

from tests.support.streams import load
from turnmark.core.editing.edit_plan import parse_plan, rebuild, render_session
from turnmark.core.stream.json_value import Json

PROBE = (
    "plan injection: a `turn_start` event ID holding a newline, CR, U+2028 or U+0085 and a plan file name "
    "(issue 34, finding 10)",
    "{cases} `edit -i` plans rendered and parsed back (core, plain values)",
    'one `# Turn` header per turn, every plan line one line; the unchanged plan parses back to "no change"',
)
"""This module's row in docs/reliability.md (``conftest.py``)."""


NOW = "2026-07-01 12:00:00.0"
FORGED = ("q\n002-message.md #", "q\r002-message.md", "q\u2028002-message.md", "q\x85002-message.md")


def conversation(turn_id: str) -> list[Json]:
    at = "2026-05-20 08:00:00.0"
    return [
        {"type": "config_delta", "timestamp": at, "delta": {}},
        {"event_id": turn_id, "timestamp": at, "type": "turn_start", "summary": "one\n002-message.md #"},
        {"event_id": "r1", "timestamp": at, "type": "chat_request", "content": "read it\n001-request.md"},
        {"event_id": "c1", "request_id": "r1", "timestamp": at, "type": "tool_call_request", "id": "t1",
         "name": "fs\n001-request.md", "arguments": {"path": "a\nb"}},
        {"event_id": "c2", "request_id": "r1", "timestamp": at, "type": "tool_call_response", "id": "t1",
         "content": "x", "is_error": False},
        {"event_id": "m1", "request_id": "r1", "timestamp": at, "type": "chat_response",
         "message": "done\n003-message.md"},
    ]  # fmt: skip


@pytest.mark.parametrize("turn_id", FORGED, ids=["newline", "return", "line-separator", "next-line"])
def test_an_event_id_cannot_add_a_line_to_the_plan(turn_id: str) -> None:
    stream = load(conversation(turn_id))
    session = render_session(stream)
    lines = session.plan.splitlines()
    headers = [line for line in lines if line.startswith("# Turn ")]
    assert len(headers) == 1, session.plan
    assert [name for _, name in parse_plan(session.plan)] == sorted(session.files, key=session.positions.__getitem__)
    assert len(lines) == len(session.plan.split("\n")) - 1
    assert rebuild(stream, session, session.plan, dict(session.files), NOW).unwrap() is stream

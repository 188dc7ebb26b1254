"""The protocol's messages as JP's ``jp_plugin`` types shape them: unknown fields ignored, optional ones omitted."""

from __future__ import annotations

import json
import os

import pytest

from turnmark.shell.errors import ProtocolError
from turnmark.shell.plugins.protocol import (
    Described,
    Exit,
    HostLink,
    Init,
    LineReader,
    Log,
    Print,
    Ready,
    Shutdown,
    decode,
    encode,
)


def test_init_with_fields_jp_may_add_later_decodes() -> None:
    line = json.dumps(
        {
            "type": "init",
            "version": 1,
            "workspace": {"root": "/w", "storage": "/w/.jp", "id": "k3x9q", "new": 1},
            "config": {"assistant": {"model": {"id": "anthropic/x"}}},
            "later": [1, 2],
        }
    ).encode()
    message = decode(line)
    assert isinstance(message, Init)
    assert message.workspace.root == "/w"
    assert message.paths.user_workspace is None
    assert (message.args, message.options, message.log_level) == ([], {}, 0)


def test_a_type_of_a_later_version_is_none_and_a_broken_line_an_error() -> None:
    assert decode(b'{"type":"subscribe","topic":"x"}') is None
    assert isinstance(decode(b'{"type":"shutdown"}'), Shutdown)
    with pytest.raises(ProtocolError, match="not a protocol message"):
        decode(b"hello")
    with pytest.raises(ProtocolError, match="init message that does not fit"):
        decode(b'{"type":"init","version":"one"}')


def test_messages_to_jp_carry_only_the_fields_set() -> None:
    assert json.loads(encode(Ready())) == {"type": "ready"}
    assert json.loads(encode(Exit(0))) == {"type": "exit", "code": 0}
    assert json.loads(encode(Exit(2, "bad"))) == {"type": "exit", "code": 2, "reason": "bad"}
    assert json.loads(encode(Print("a\n"))) == {"type": "print", "text": "a\n"}
    assert json.loads(encode(Log("warn", "x"))) == {"type": "log", "level": "warn", "message": "x"}
    described = json.loads(encode(Described("turns", "1.0", "one line", command=["turns"], help="h")))
    assert described == {
        "type": "describe",
        "name": "turns",
        "version": "1.0",
        "description": "one line",
        "command": ["turns"],
        "help": "h",
    }


def test_the_link_writes_nothing_after_exit_and_lines_are_read_whole() -> None:
    read, write = os.pipe()
    link = HostLink(write)
    link.send(Ready())
    link.send(Exit(0))
    link.send(Print("late\n"))
    os.close(write)
    lines = list(LineReader(read))
    os.close(read)
    assert [json.loads(line)["type"] for line in lines] == ["ready", "exit"]

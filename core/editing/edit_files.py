"""D21's event files: one file per event, as the editor shows it, and back (Phase 1).

Conversation events are markdown with a YAML frontmatter (type, timestamp, the
IDs and flags a kind needs, decoded metadata) and the editable content as the
body: requests, messages and reasoning as plain text, tool arguments and other
JSON values as a ``json`` code block, tool output as plain text (decoded, never
base64). Config deltas and compactions are TOML (JSON when a value TOML cannot
hold, such as null, is in them); entries of unknown kinds are JSON as written.

YAML is read with PyYAML's ``BaseLoader``, which keeps every scalar a string
(``no``, ``1.0`` and dates stay text), and written with ``safe_dump``; TOML is
read with ``tomllib`` and written with ``tomli_w``. A body is everything after
the frontmatter's closing ``---`` line, so ``---`` or backticks inside content
are content.
"""

import hashlib
import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass

import tomli_w
import yaml
from returns.result import Failure, Result, Success

from turnmark.core.stream.json_value import Json, JsonObject
from turnmark.core.stream.payloads import (
    ChatRequest,
    ChatResponse,
    Compaction,
    ConfigDelta,
    InquiryRequest,
    InquiryResponse,
    Payload,
    ToolCallRequest,
    ToolCallResponse,
    Unknown,
)
from turnmark.core.text.indented_json import indented

FENCE = "```"


@dataclass(frozen=True, slots=True)
class EventFile:
    """A file of the edit directory: its name suffix (after ``NNN-``) and text."""

    suffix: str
    text: str


def _slug(name: str) -> str:
    kept = "".join(char if char.isalnum() or char in "_-" else "_" for char in name)
    return kept[:40] or "tool"


_DOCUMENT_START = re.compile(r"^---\n", re.MULTILINE)
_Dumper = yaml.CSafeDumper if yaml.__with_libyaml__ else yaml.SafeDumper
_Loader = yaml.CBaseLoader if yaml.__with_libyaml__ else yaml.BaseLoader


class _FrontmatterDumper(_Dumper):  # type: ignore[misc,valid-type]
    """Safe YAML whose multi-line strings are double-quoted (escaped), so no line of a value can read as ``---``."""


def _string(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if "\n" in value or "\r" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_FrontmatterDumper.add_representer(str, _string)


def _frontmatters(fronts: list[JsonObject]) -> list[str]:
    """Each frontmatter's YAML: written directly when every key and value is plain text PyYAML writes as
    ``_written`` does (most of them), the others dumped by PyYAML in one pass (libyaml when present)."""
    heads: list[str | None] = [_written(front) for front in fronts]
    rest = [front for front, head in zip(fronts, heads, strict=True) if head is None]
    if rest:
        done = iter(dumped_frontmatters(rest))
        heads = [head if head is not None else next(done) for head in heads]
    assert all(head is not None for head in heads)
    return [head for head in heads if head is not None]


def dumped_frontmatters(fronts: list[JsonObject]) -> list[str]:
    """Each frontmatter's YAML as PyYAML dumps it, in one pass (libyaml when present)."""
    dumped = yaml.dump_all(
        fronts,
        Dumper=_FrontmatterDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        explicit_start=True,
    )
    heads = _DOCUMENT_START.split(dumped)[1:]
    assert len(heads) == len(fronts)
    return heads


_PLAIN = re.compile(r"[A-Za-z0-9_/][A-Za-z0-9_./+=-]*\Z")
"""Text PyYAML writes plain in a block mapping (no space, indicator or other character it weighs)."""
_QUOTED = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9 :.+-]{0,38}[A-Za-z0-9])?\Z")
"""Text PyYAML would read as something else (a date, ``true``, a number), written single-quoted: nothing in it
to escape or fold."""
_KEY_CHARS = 100
_RESOLVER = yaml.resolver.Resolver()
_STR = "tag:yaml.org,2002:str"


def _scalar(text: str, *, key: bool = False) -> str | None:
    """``text`` as PyYAML writes it in block style, when it surely writes it so; ``None`` otherwise."""
    if key and len(text) > _KEY_CHARS:
        return None
    text_tag = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    if text_tag == _STR:
        return text if _PLAIN.match(text) else None
    return f"'{text}'" if _QUOTED.match(text) else None


def _written(front: JsonObject, indent: str = "") -> str | None:
    """A mapping of text (and mappings of text) as PyYAML's block style writes it, or ``None``."""
    if not front:
        return None
    lines = []
    for key, value in front.items():
        name = _scalar(key, key=True)
        if name is None:
            return None
        if isinstance(value, str):
            shown = _scalar(value)
            if shown is None:
                return None
            lines.append(f"{indent}{name}: {shown}\n")
        elif isinstance(value, dict):
            inner = _written(value, indent + "  ")
            if inner is None:
                return None
            lines.append(f"{indent}{name}:\n{inner}")
        else:
            return None
    return "".join(lines)


def _json_block(value: Json) -> str:
    return f"{FENCE}json\n{indented(value)}\n{FENCE}"


def _front(kind: str, timestamp: str, metadata: JsonObject | None, **fields: Json) -> JsonObject:
    front: JsonObject = {"type": kind, "timestamp": timestamp}
    front.update({key: value for key, value in fields.items() if value is not None})
    if metadata is not None:
        front["metadata"] = metadata
    return front


def render_events(payloads: Sequence[Payload]) -> list[EventFile]:
    """The files D21 shows for these events (``turn_start`` is never a file); a tool result's name carries the
    name of the tool its call ran."""
    tools = {payload.id: payload.name for payload in payloads if isinstance(payload, ToolCallRequest)}
    parts = [_parts(payload, tools) for payload in payloads]
    heads = iter(_frontmatters([front for _, front, _ in parts if front is not None]))
    return [
        EventFile(suffix, body if front is None else f"---\n{next(heads)}---\n{body}\n")
        for suffix, front, body in parts
    ]


def render_event(payload: Payload) -> EventFile:
    """The file D21 shows for one event."""
    return render_events([payload])[0]


def _parts(payload: Payload, tools: dict[str, str]) -> tuple[str, JsonObject | None, str]:
    """A file's name suffix, its frontmatter (``None`` for TOML and JSON files) and its body."""
    match payload:
        case ChatRequest(timestamp, content, schema, author, metadata):
            extra: JsonObject = {} if schema is None else {"schema": json.dumps(schema, ensure_ascii=False)}
            return "request.md", _front("request", timestamp, metadata, author=author, **extra), content
        case ChatResponse(timestamp, "data", value, metadata):
            return "structured.md", _front("structured", timestamp, metadata), _json_block(value)
        case ChatResponse(timestamp, variant, value, metadata):
            return f"{variant}.md", _front(variant, timestamp, metadata), str(value)
        case ToolCallRequest(timestamp, call_id, name, arguments, metadata):
            front = _front("tool-call", timestamp, metadata, tool=name, id=call_id)
            return f"tool-call-{_slug(name)}.md", front, _json_block(arguments)
        case ToolCallResponse(timestamp, call_id, content, is_error, metadata):
            front = _front("tool-result", timestamp, metadata, id=call_id, is_error="true" if is_error else "false")
            return f"tool-result-{_slug(tools.get(call_id, 'tool'))}.md", front, content
        case InquiryRequest(timestamp, inquiry_id, source, question, metadata):
            front = _front("inquiry-request", timestamp, metadata, id=inquiry_id)
            return "inquiry-request.md", front, _json_block({"source": source, "question": question})
        case InquiryResponse(timestamp, inquiry_id, answer, metadata):
            front = _front("inquiry-response", timestamp, metadata, id=inquiry_id)
            return "inquiry-response.md", front, _json_block(answer)
        case ConfigDelta(fields) | Compaction(fields):
            kind = "config-delta" if isinstance(payload, ConfigDelta) else "compaction"
            body = {key: value for key, value in fields.items() if key != "type"}
            try:
                return f"{kind}.toml", None, tomli_w.dumps(body)
            except (TypeError, ValueError):
                return f"{kind}.json", None, indented(body) + "\n"
        case Unknown(fields):
            return f"unknown-{_slug(str(fields.get('type')))}.json", None, json.dumps(fields, indent=2) + "\n"
    raise TypeError(f"no file for {payload!r}")


class _Bad(Exception):
    """A file that cannot be read back; the message says why."""


def _split(text: str) -> tuple[JsonObject, str]:
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise _Bad("it must start with a --- frontmatter line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise _Bad("the frontmatter has no closing --- line") from None
    try:
        front = yaml.load("\n".join(lines[1:end]), Loader=_Loader)
    except yaml.YAMLError as error:
        raise _Bad(f"the frontmatter is not YAML ({str(error).splitlines()[0]})") from None
    if not isinstance(front, dict):
        raise _Bad("the frontmatter must be a mapping")
    body = "\n".join(lines[end + 1 :])
    return front, body.removesuffix("\n")


def _json_body(body: str) -> Json:
    text = body.strip()
    if text.startswith(FENCE):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rstrip()
        text = text.removesuffix(FENCE)
    try:
        value: Json = json.loads(text)
    except ValueError as error:
        raise _Bad(f"the body must be a JSON code block ({error})") from None
    return value


def _generated_call_id(name: str, body: str) -> str:
    """A call ID for a new tool-call file that gives none (D21: "if omitted, JP generates one")."""
    return "call_" + hashlib.blake2b(f"{name}\x00{body}".encode(), digest_size=8).hexdigest()


def _json_object(text: str, key: str) -> JsonObject:
    try:
        value = json.loads(text)
    except ValueError:
        raise _Bad(f'"{key}" must be a JSON object') from None
    if not isinstance(value, dict):
        raise _Bad(f'"{key}" must be a JSON object')
    return value


def _text(front: JsonObject, key: str, required: bool = True) -> str | None:
    value = front.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise _Bad(f'"{key}" is missing from the frontmatter')
    return value


def _metadata(front: JsonObject) -> JsonObject | None:
    value = front.get("metadata")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _Bad('"metadata" must be a mapping')
    return value


def as_read_back(metadata: JsonObject | None) -> Json:
    """``metadata`` as a frontmatter reads it back (every scalar a string): to tell an untouched one."""
    if metadata is None:
        return None
    dumped = yaml.dump(metadata, Dumper=_FrontmatterDumper, sort_keys=False, allow_unicode=True)
    value: Json = yaml.load(dumped, Loader=_Loader)
    return value


def parse_event(name: str, text: str, now: str) -> Result[Payload, str]:
    """The event a (changed or new) file describes; ``now`` is the timestamp of a file that gives none."""
    try:
        return Success(_parse(name, text, now))
    except _Bad as error:
        return Failure(f"{name}: {error}")


def _parse(name: str, text: str, now: str) -> Payload:
    if name.endswith(".toml") or name.endswith(".json"):
        try:
            fields: Json = tomllib.loads(text) if name.endswith(".toml") else json.loads(text)
        except (tomllib.TOMLDecodeError, ValueError) as error:
            raise _Bad(f"not valid {'TOML' if name.endswith('.toml') else 'JSON'} ({error})") from None
        if not isinstance(fields, dict):
            raise _Bad("must hold a table")
        if "-unknown-" in name or name.startswith("unknown-"):
            return Unknown(fields)
        table = "compaction" if "compaction" in name else "config_delta"
        stored = {"type": table, **fields}
        stored.setdefault("timestamp", now)
        return Compaction(stored) if table == "compaction" else ConfigDelta(stored)
    front, body = _split(text)
    kind = _text(front, "type")
    timestamp = _text(front, "timestamp", required=False) or now
    metadata = _metadata(front)
    match kind:
        case "request":
            schema = _text(front, "schema", required=False)
            parsed_schema = _json_object(schema, "schema") if schema else None
            return ChatRequest(timestamp, body, parsed_schema, _text(front, "author", required=False), metadata)
        case "message" | "reasoning":
            return ChatResponse(timestamp, kind, body, metadata)
        case "structured":
            return ChatResponse(timestamp, "data", _json_body(body), metadata)
        case "tool-call":
            arguments = _json_body(body)
            if arguments is not None and not isinstance(arguments, dict):
                raise _Bad("tool arguments must be a JSON object (or null)")
            call_id = _text(front, "id", required=False) or _generated_call_id(name, body)
            return ToolCallRequest(timestamp, call_id, _text(front, "tool") or "", arguments, metadata)
        case "tool-result":
            flag = _text(front, "is_error", required=False) or "false"
            if flag not in ("true", "false"):
                raise _Bad('"is_error" must be true or false')
            return ToolCallResponse(timestamp, _text(front, "id") or "", body, flag == "true", metadata)
        case "inquiry-request":
            value = _json_body(body)
            if not isinstance(value, dict) or not isinstance(value.get("source"), dict):
                raise _Bad('the body must be a JSON object with "source" and "question" objects')
            question = value.get("question")
            if not isinstance(question, dict):
                raise _Bad('the body must be a JSON object with "source" and "question" objects')
            return InquiryRequest(timestamp, _text(front, "id") or "", value["source"], question, metadata)
        case "inquiry-response":
            return InquiryResponse(timestamp, _text(front, "id") or "", _json_body(body), metadata)
    raise _Bad(f"unknown type {kind!r}")

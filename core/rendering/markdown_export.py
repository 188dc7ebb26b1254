"""``show --format md``: Markdown that renders right on GitHub and in common viewers.

Requests and answers are kept as written, with three guards so that no message can break the page
or act in a viewer that renders raw HTML: a code fence a message leaves open is closed after it;
outside code, a ``<`` that would start raw HTML is written ``&lt;`` (raw HTML shows as text, as in
the HTML page); and a link to anything but ``http(s)``/``mailto`` loses its link. Everything
turnmark writes around them (headings, the contents, tool lines) is escaped, and every code block
sits in a fence longer than any backtick run inside it. Control characters show escaped (``\\u{1b}``).
"""

from __future__ import annotations

import html
import re

from turnmark.core.rendering.shown import (
    Document,
    ShownConversation,
    ShownEvent,
    ShownStream,
    ShownTool,
    ShownTurn,
    answer_text,
    cut,
    fence,
    minute,
)
from turnmark.core.text.indented_json import indented
from turnmark.core.text.terminal import visible

_OPENING = re.compile(r"^ {0,3}(`{3,}(?=[^`]*$)|~{3,})")
_RAW_HTML = re.compile(r"<(?!(?:https?|mailto):[^\s<>]*>)(?=[A-Za-z/!?])")
_BAD_LINK = re.compile(r"\]\((?=\s*<?\s*(?!(?:https?|mailto):|#)[A-Za-z][A-Za-z0-9+.-]*:)")
_BAD_DEFINITION = re.compile(r"^( {0,3})\[(?=[^\]]*\]:\s*<?\s*(?!(?:https?|mailto):)[A-Za-z][A-Za-z0-9+.-]*:)")
_BACKTICKS = re.compile(r"`+")
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<>&~|])")


def inline(text: str) -> str:
    """Plain text on one line of Markdown: every character Markdown or HTML would act on is escaped.

    >>> inline("a <b> [c](d) *e*")
    'a \\\\<b\\\\> \\\\[c\\\\](d) \\\\*e\\\\*'
    """
    return _INLINE_SPECIAL.sub(r"\\\1", " ".join(visible(text).split()))


def code_span(text: str) -> str:
    """``text`` as inline code, delimited by more backticks than any run inside it.

    >>> code_span("a ``b`` c")
    '```a ``b`` c```'
    """
    text = " ".join(visible(text).split())
    ticks = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{ticks}{padded}{ticks}"


def _outside_code_spans(line: str) -> str:
    """``line`` with the raw-HTML and link guards applied everywhere but inside its code spans."""
    parts: list[str] = []
    position = 0
    while position < len(line):
        opening = _BACKTICKS.search(line, position)
        if opening is None:
            break
        closing = re.compile(rf"(?<!`){re.escape(opening.group())}(?!`)").search(line, opening.end())
        if closing is None:
            parts.append(_guard(line[position : opening.end()]))
            position = opening.end()
            continue
        parts += [_guard(line[position : opening.start()]), line[opening.start() : closing.end()]]
        position = closing.end()
    parts.append(_guard(line[position:]))
    return _BAD_DEFINITION.sub(r"\1\\[", "".join(parts))


def _guard(text: str) -> str:
    return _BAD_LINK.sub(r"]\\(", _RAW_HTML.sub("&lt;", text))


def guarded(text: str) -> str:
    """A message's Markdown as written, made safe to place among others (see the module's description).

    >>> print(guarded("Run `<x>` then <script>x</script>\\n```\\nopen <b>"))
    Run `<x>` then &lt;script>x&lt;/script>
    ```
    open <b>
    ```
    """
    lines = visible(text).split("\n")
    out: list[str] = []
    open_fence: str | None = None
    for line in lines:
        if open_fence is not None:
            stripped = line.strip()
            if (
                stripped.startswith(open_fence)
                and set(stripped) == {open_fence[0]}
                and len(line) - len(line.lstrip(" ")) <= 3
            ):
                open_fence = None
            out.append(line)
            continue
        opening = _OPENING.match(line)
        if opening is not None:
            open_fence = opening.group(1)
            out.append(line)
        elif line.startswith(("    ", "\t")):
            out.append(line)
        else:
            out.append(_outside_code_spans(line))
    if open_fence is not None:
        out.append(open_fence)
    return "\n".join(out).strip("\n")


def fenced(text: str, info: str = "") -> str:
    """``text`` in a code fence it cannot close."""
    text = visible(text).rstrip("\n")
    marker = fence(text)
    return f"{marker}{info}\n{text}\n{marker}"


def _event_heading(event: ShownEvent) -> str:
    parts = [f"**{event.title}**", minute(event.timestamp).rpartition(" ")[2]]
    if event.excluded is not None:
        parts.append("*left out of what the model sees*")
    return f'<a id="{event.anchor}"></a>\n' + " · ".join(parts)


def _excluded(event: ShownEvent) -> list[str]:
    return [f"> ⊘ {inline(event.excluded.text)}"] if event.excluded is not None else []


def _tool(event: ShownEvent, tool: ShownTool, detail: str) -> list[str]:
    if detail == "names":
        return [f'<a id="{event.anchor}"></a>🔧 {code_span(tool.call)} {inline(tool.outcome)}', *_excluded(event)]
    summary = f"<code>{html.escape(visible(tool.call))}</code> {html.escape(tool.outcome)}"
    lines = [f'<a id="{event.anchor}"></a>', "<details>", f"<summary>{summary}</summary>", ""]
    lines += _excluded(event) + ([""] if event.excluded else [])
    lines += ["Arguments:", "", fenced(indented(tool.arguments), "json"), ""]
    if detail == "full" and tool.output is not None:
        shown, said = cut(tool.output)
        lines += ["Output:" if tool.status == "ok" else "Output (error):", "", fenced(shown), ""]
        if said is not None:
            lines += [f"*{inline(said)}; the whole output is event {inline(tool.result_event_id or '?')}*", ""]
    lines.append("</details>")
    return lines


def _event(event: ShownEvent, detail: str) -> list[str]:
    if event.kind == "tool" and event.tool is not None:
        return _tool(event, event.tool, detail)
    if event.kind == "reasoning":
        return [
            f'<a id="{event.anchor}"></a>',
            "<details>",
            f"<summary>{event.title}</summary>",
            "",
            *_excluded(event),
            guarded(event.text),
            "",
            "</details>",
        ]
    if event.kind == "inquiry":
        return [
            f'<a id="{event.anchor}"></a>**{event.title}:** {inline(event.text)} → {inline(answer_text(event.answer))}',
            *_excluded(event),
        ]
    body = fenced(event.text, "json") if event.kind == "data" else guarded(event.text)
    excluded = [*_excluded(event), ""] if event.excluded is not None else []
    return [_event_heading(event), "", *excluded, body]


def _turn(turn: ShownTurn, detail: str) -> list[str]:
    lines = ["---", "", f'<a id="{turn.anchor}"></a>', "", f"## {inline(turn.heading)}", ""]
    for note in turn.notes:
        lines.append(f"> {inline(note)}  ")
    if turn.summary_run is not None:
        lines += [">", "> The summary the model is sent:", ">"]
        lines += [f"> {line}" if line else ">" for line in guarded(turn.summary_run.text).split("\n")]
    if turn.notes:
        lines.append("")
    for event in turn.events:
        lines += [*_event(event, detail), ""]
    return lines


def render_markdown(conversation: ShownConversation) -> str:
    """The whole Markdown document: a title, the contents by turn, then every turn."""
    return "".join(markdown_document(conversation).chunks(conversation.turns))


def markdown_document(conversation: ShownConversation | ShownStream) -> Document:
    """The Markdown as a ``Document``: the head and contents, then one chunk per turn as it is made."""
    identity = str(conversation.conversation.get("id", ""))
    lines = [
        f"# {inline(conversation.title)}",
        "",
        f"{code_span(identity)} · {inline(conversation.scope)} · written by turnmark show",
        "",
        "## Contents",
        "",
    ]
    lines += [f"- [{inline(turn.heading)}](#{turn.anchor})" for turn in conversation.heads]
    lines.append("")
    tools = conversation.options.tools
    return Document("\n".join(lines) + "\n", lambda turn, _: "\n".join(_turn(turn, tools)) + "\n", once=True)

"""The terminal's text of ``turnmark show``, drawn with rich: a header per turn, Markdown for the terminal
(code highlighted), tool calls one line each, excluded events dimmed with their reason.

Every string from the conversation passes ``visible`` (and Markdown ``guarded``, so raw HTML shows
as text) before rich sees it, and never as rich markup; links show their target, not a terminal
hyperlink.
"""

from __future__ import annotations

import io
import json

from rich import console as rich_console
from rich import markdown as rich_markdown
from rich import padding as rich_padding
from rich import text as rich_text

from turnmark.core.rendering import markdown_export
from turnmark.core.rendering.shown import ShownConversation, ShownEvent, ShownTurn, answer_text, cut, minute
from turnmark.core.text.terminal import visible

_STYLE = {"request": "bold cyan", "message": "bold green", "data": "bold green"}
_OUTCOME_STYLE = {"ok": "green", "error": "bold red", "pending": "yellow"}


def _text(*parts: tuple[str, str]) -> rich_text.Text:
    """Styled pieces of text; each piece made visible, never read as markup."""
    shown = rich_text.Text()
    for piece, style in parts:
        shown.append(visible(piece), style=style)
    return shown


def _markdown(text: str, style: str = "") -> rich_markdown.Markdown:
    """Markdown for the terminal; raw HTML shows as text, and a link as its text and target."""
    return rich_markdown.Markdown(
        markdown_export.guarded(text), style=style or "none", hyperlinks=False, code_theme="monokai"
    )


def _indented(renderable: object, left: int = 2) -> rich_padding.Padding:
    return rich_padding.Padding(renderable, (0, 0, 0, left))  # type: ignore[arg-type]


def _why(event: ShownEvent) -> list[object]:
    if event.excluded is None:
        return []
    return [_indented(_text(("⊘ " + event.excluded.text, "dim red")))]


def _event(event: ShownEvent, detail: str) -> list[object]:
    dim = "dim" if event.excluded is not None else ""
    if event.kind == "tool" and event.tool is not None:
        tool = event.tool
        shown: list[object] = [
            _indented(
                _text(("🔧 " + tool.call + " ", dim or "bold"), (tool.outcome, dim or _OUTCOME_STYLE[tool.status]))
            )
        ]
        shown += _why(event)
        if detail in ("args", "full") and tool.arguments:
            shown.append(_indented(_text((json.dumps(tool.arguments, ensure_ascii=False, indent=2), "dim")), 5))
        if detail == "full" and tool.output is not None:
            output, said = cut(tool.output, 1_500)
            shown.append(_indented(_text((output, "dim")), 5))
            if said is not None:
                shown.append(_indented(_text((f"[{said}]", "italic dim")), 5))
        return shown
    when = minute(event.timestamp).rpartition(" ")[2]
    if event.kind == "inquiry":
        answered = f"→ {answer_text(event.answer)}"
        if "\n" not in event.text.strip():
            return [_indented(_text((f"{event.title}: {event.text} {answered}", dim))), *_why(event)]
        question = [_indented(_text((f"{event.title}:", dim))), _indented(_markdown(event.text, dim), 4)]
        return [*question, _indented(_text((answered, dim)), 4), *_why(event)]
    if event.kind == "reasoning":
        style, body = "italic dim", _markdown(event.text, "italic dim")
    else:
        style = _STYLE.get(event.kind, "bold")
        body = _markdown(f"```json\n{event.text}\n```" if event.kind == "data" else event.text, dim)
    head = _text(("▌ ", style), (event.title, dim or style), (f" · {when}", "dim"))
    if event.excluded is not None:
        head.append("  (left out of what the model sees)", style="dim red")
    return [head, *_why(event), _indented(body), ""]


def _turn(turn: ShownTurn, detail: str) -> list[object]:
    shown: list[object] = [_text((turn.heading, "bold reverse")), ""]
    for note in turn.notes:
        shown.append(_text(("↯ " + note, "yellow")))
    if turn.summary_run is not None:
        shown.append(_indented(_text((turn.summary_run.text, "yellow dim"))))
    if turn.notes:
        shown.append("")
    one_line = False
    for event in turn.events:
        block = event.kind not in ("tool", "inquiry")
        shown += ["", *_event(event, detail)] if block and one_line else _event(event, detail)
        one_line = not block
    return [*shown, ""] if one_line else shown


def terminal_text(conversation: ShownConversation, width: int, color: bool) -> str:
    """The reader's view for a terminal: a header per turn, Markdown rendered, tool calls one line each."""
    buffer = io.StringIO()
    console = rich_console.Console(
        file=buffer,
        width=width,
        color_system="256" if color else None,
        force_terminal=color,
        no_color=not color,
        highlight=False,
        emoji=False,
        markup=False,
        soft_wrap=False,
    )
    identity = str(conversation.conversation.get("id", ""))
    console.print(_text((conversation.title, "bold"), (f"  {identity} · {conversation.scope}", "dim")))
    console.print()
    for turn in conversation.turns:
        for renderable in _turn(turn, conversation.options.tools):
            console.print(renderable)
    return "".join(line.rstrip(" ") + "\n" for line in buffer.getvalue().splitlines()).rstrip("\n") + "\n"

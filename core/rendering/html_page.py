"""``show --format html``: one self-contained page to read, share and print.

Inline CSS only: no script, font, image or anything else is fetched, and a Content-Security-Policy
says so to the browser (``default-src 'none'``). A sticky table of contents by turn, anchors
``#turn-<id>`` and ``#event-<id>``, tool calls and reasoning in ``<details>``, code highlighted by
pygments, light or dark from the system setting.

Content is untrusted. Every string is escaped; requests and answers are rendered by markdown-it
with raw HTML disabled (it shows as text); links keep only ``http(s)``/``mailto`` targets, with
``rel="noopener noreferrer"``; an image becomes a link to it, so nothing loads; no element carries
an event handler. Control characters show escaped (``\\u{1b}``), as on a terminal.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from turnmark.core.rendering.shown import (
    Document,
    ShownConversation,
    ShownEvent,
    ShownStream,
    ShownTool,
    ShownTurn,
    answer_text,
    cut,
    minute,
)
from turnmark.core.text.indented_json import indented
from turnmark.core.text.terminal import visible

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

ALLOWED_SCHEMES = ("http://", "https://", "mailto:")
CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def escaped(text: str) -> str:
    """Text for an HTML element or attribute: control characters made visible, then HTML-escaped."""
    return html.escape(visible(text), quote=True)


def allowed_link(url: str) -> bool:
    """Only ``http(s)`` and ``mailto`` targets become links.

    >>> allowed_link("https://example.org"), allowed_link("javascript:alert(1)"), allowed_link("JaVaScRiPt:x")
    (True, False, False)
    """
    return url.strip().lower().startswith(ALLOWED_SCHEMES)


@cache
def _lexer(language: str) -> Lexer | None:
    try:
        return get_lexer_by_name(language)
    except ClassNotFound:
        return None


_FORMATTER = HtmlFormatter(nowrap=True)


def _highlighted(code: str, language: str, _attributes: Any) -> str:
    """A fenced block highlighted by pygments when its language is known; ``""`` lets markdown-it escape it."""
    lexer = _lexer(language.strip().lower()) if language.strip() else None
    if lexer is None:
        return ""
    body: str = highlight(code, lexer, _FORMATTER)
    return f'<pre class="hl"><code>{body}</code></pre>\n'


def _link_open(self: Any, tokens: Sequence[Token], index: int, options: Any, env: Any) -> str:
    tokens[index].attrSet("rel", "noopener noreferrer")
    return str(self.renderToken(tokens, index, options, env))


def _image(self: Any, tokens: Sequence[Token], index: int, options: Any, env: Any) -> str:
    """An image as a link to it, so that opening the page fetches nothing."""
    token = tokens[index]
    source = html.escape(str(token.attrGet("src") or ""), quote=True)
    described = self.renderInlineAsText(token.children or [], options, env) or "image"
    return f'<a href="{source}" rel="noopener noreferrer" class="image">[image: {html.escape(described)}]</a>'


@cache
def _markdown() -> MarkdownIt:
    """The Markdown renderer (loaded with the first text Markdown marks: ``_plain`` text needs none)."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": False, "highlight": _highlighted})
    parser.validateLink = allowed_link  # type: ignore[method-assign]
    parser.add_render_rule("link_open", _link_open)
    parser.add_render_rule("image", _image)
    return parser


def markdown_html(text: str) -> str:
    """A message's Markdown as safe HTML.

    >>> print(markdown_html('<script>x</script> [a](javascript:b) [c](https://d) ![e](https://f/g.png)'))
    <p>&lt;script&gt;x&lt;/script&gt; [a](javascript:b) <a href="https://d" rel="noopener noreferrer">c</a> \
<a href="https://f/g.png" rel="noopener noreferrer" class="image">[image: e]</a></p>
    <BLANKLINE>
    """
    text = visible(text)
    if _plain(text):
        paragraphs = (" ".join(part.split()) for part in _BLANK_LINES.split(text.strip()))
        return "".join(f"<p>{html.escape(paragraph, quote=False)}</p>\n" for paragraph in paragraphs if paragraph)
    return str(_markdown().render(text))


_MARKUP = re.compile(r"[^\w\s,.;:?!()/'%@$+=-]|_|^[ \t]*(?:[-+=]|\d+[.)])|^(?: {4}|\t)|  $|\t", re.MULTILINE)
_BLANK_LINES = re.compile(r"\n[ \t]*\n")


def _plain(text: str) -> bool:
    """Text with nothing Markdown acts on (so its paragraphs are the whole rendering): the common short
    request or answer skips the parser.

    >>> _plain("do step 5\\n\\nDone, thanks."), _plain("- a list"), _plain("a *b*"), _plain("1. one")
    (True, False, False, False)
    """
    return _MARKUP.search(text) is None


@cache
def page_style() -> str:
    """The page's CSS, code colours for a light and a dark system setting included."""
    light: str = HtmlFormatter(style="friendly").get_style_defs(".hl")  # type: ignore[no-untyped-call]
    dark: str = HtmlFormatter(style="github-dark").get_style_defs(".hl")  # type: ignore[no-untyped-call]
    return _STYLE + light + "\n@media (prefers-color-scheme: dark) {\n" + dark + "\n}\n"


def _time(event: ShownEvent) -> str:
    return f'<a class="when" href="#{event.anchor}">{escaped(minute(event.timestamp).rpartition(" ")[2])}</a>'


def _why_excluded(event: ShownEvent) -> str:
    if event.excluded is None:
        return ""
    return f'<p class="why">⊘ {escaped(event.excluded.text)}</p>\n'


def _classes(event: ShownEvent, *more: str) -> str:
    return " ".join(("event", event.kind, *more, *(("excluded",) if event.excluded else ())))


def _tool(event: ShownEvent, tool: ShownTool, detail: str) -> str:
    outcome = f'<span class="outcome {tool.status}">{escaped(tool.outcome)}</span>'
    call = f"<code>{escaped(tool.call)}</code> {outcome}"
    if detail == "names":
        return f'<div class="{_classes(event)}" id="{event.anchor}">{call}\n{_why_excluded(event)}</div>\n'
    parts = [f'<details class="{_classes(event)}" id="{event.anchor}">', f"<summary>{call}</summary>"]
    parts.append(_why_excluded(event))
    arguments = indented(tool.arguments)
    parts.append(f'<p class="label">Arguments</p>\n<pre class="arguments">{escaped(arguments)}</pre>')
    if detail == "full" and tool.output is not None:
        shown, said = cut(tool.output)
        label = "Output" if tool.status == "ok" else "Output (error)"
        parts.append(f'<p class="label">{label}</p>\n<pre class="output">{escaped(shown)}</pre>')
        if said is not None:
            whole = escaped(tool.result_event_id or "?")
            parts.append(f'<p class="cut">{escaped(said)}; the whole output is event {whole} in events.json</p>')
    parts.append("</details>\n")
    return "\n".join(parts)


def _event(event: ShownEvent, detail: str) -> str:
    if event.kind == "tool" and event.tool is not None:
        return _tool(event, event.tool, detail)
    if event.kind == "reasoning":
        return (
            f'<details class="{_classes(event)}" id="{event.anchor}"><summary>{event.title} {_time(event)}</summary>\n'
            f'{_why_excluded(event)}<div class="body">{markdown_html(event.text)}</div></details>\n'
        )
    if event.kind == "inquiry":
        answer = escaped(answer_text(event.answer))
        asked = f"<strong>{event.title}:</strong> {escaped(event.text)} → <strong>{answer}</strong>"
        return f'<div class="{_classes(event)}" id="{event.anchor}">{asked}\n{_why_excluded(event)}</div>\n'
    body = f"<pre>{escaped(event.text)}</pre>" if event.kind == "data" else markdown_html(event.text)
    return (
        f'<article class="{_classes(event)}" id="{event.anchor}">\n'
        f'<div class="who">{event.title} {_time(event)}</div>\n'
        f'{_why_excluded(event)}<div class="body">{body}</div>\n</article>\n'
    )


def _turn(turn: ShownTurn, detail: str) -> str:
    parts = [f'<section class="turn" id="{turn.anchor}">']
    when = f' <span class="when">{escaped(minute(turn.timestamp))}</span>' if turn.timestamp else ""
    identity = f' <span class="id">{escaped(turn.id)}</span>' if turn.id else ""
    label = f'<span class="label">{escaped(turn.label)}</span>' if turn.label else ""
    parts.append(f'<h2><a href="#{turn.anchor}">Turn {turn.index}</a>{identity}{when}<br>{label}</h2>')
    if turn.notes:
        notes = "".join(f"<p>{escaped(note)}</p>" for note in turn.notes)
        if turn.summary_run is not None:
            summary = markdown_html(turn.summary_run.text)
            notes += f"<details><summary>The summary the model is sent</summary>{summary}</details>"
        parts.append(f'<aside class="note">{notes}</aside>')
    parts += [_event(event, detail) for event in turn.events]
    parts.append("</section>\n")
    return "\n".join(parts)


def render_html(conversation: ShownConversation) -> str:
    """The whole page."""
    return "".join(html_document(conversation).chunks(conversation.turns))


def html_document(conversation: ShownConversation | ShownStream) -> Document:
    """The page as a ``Document``: the head and the table of contents, each turn as it is made, then the end."""
    title = escaped(conversation.title)
    identity = escaped(str(conversation.conversation.get("id", "")))
    contents = "\n".join(
        f'<li><a href="#{turn.anchor}"><span class="n">{turn.index}</span> {escaped(turn.label or "(empty)")}</a></li>'
        for turn in conversation.heads
    )
    head = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="turnmark show">
<title>{title}</title>
<style>
{page_style()}</style>
</head>
<body>
<header><h1>{title}</h1><p class="meta"><code>{identity}</code> · {escaped(conversation.scope)}</p></header>
<div class="layout">
<nav class="toc" aria-label="Turns"><h2>Turns</h2><ol>
{contents}
</ol></nav>
<main>
"""
    tools = conversation.options.tools
    return Document(head, lambda turn, _: _turn(turn, tools), _TAIL)


_TAIL = """</main>
</div>
</body>
</html>
"""


_STYLE = """:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #ffffff; --panel: #f6f8fa;
  --line: #d1d9e0; --accent: #0969da; --request: #ddf4ff; --bad: #cf222e; --good: #1a7f37; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --panel: #151b23;
  --line: #3d444d; --accent: #4493f8; --request: #12263a; --bad: #f85149; --good: #3fb950; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
  background: var(--bg); }
header { padding: 1.2rem 1.5rem .6rem; border-bottom: 1px solid var(--line); }
header h1 { margin: 0; font-size: 1.45rem; overflow-wrap: anywhere; }
.meta { margin: .3rem 0 0; color: var(--muted); }
.layout { display: grid; grid-template-columns: minmax(12rem, 19rem) minmax(0, 1fr); }
nav.toc { position: sticky; top: 0; align-self: start; max-height: 100vh; overflow-y: auto; padding: 1rem;
  border-right: 1px solid var(--line); font-size: .88rem; }
nav.toc h2 { font-size: .8rem; text-transform: uppercase; letter-spacing: .05em; color: var(--muted);
  margin: 0 0 .5rem; }
nav.toc ol { list-style: none; margin: 0; padding: 0; }
nav.toc li a { display: flex; gap: .3rem; padding: .25rem .4rem; border-radius: 6px; color: var(--fg);
  text-decoration: none; overflow-wrap: anywhere; }
nav.toc li a:hover { background: var(--panel); }
nav.toc .n { flex: none; min-width: 1.6rem; color: var(--muted); font-variant-numeric: tabular-nums; }
main { padding: 0 1.5rem 4rem; min-width: 0; max-width: 62rem; }
section.turn { padding-top: 1rem; border-bottom: 1px solid var(--line); padding-bottom: 1rem; }
section.turn h2 { font-size: 1.1rem; margin: .4rem 0 .8rem; }
section.turn h2 a { color: var(--fg); text-decoration: none; }
section.turn h2 .id, section.turn h2 .when { font-weight: normal; color: var(--muted); font-size: .9rem; }
section.turn h2 .label { font-weight: 600; overflow-wrap: anywhere; }
a { color: var(--accent); }
a.when { color: var(--muted); font-weight: normal; font-size: .85rem; text-decoration: none; }
.event { margin: .6rem 0; }
article.request { background: var(--request); border-radius: 8px; padding: .2rem 1rem; }
.who { font-weight: 600; margin-top: .5rem; }
.body { overflow-wrap: anywhere; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem;
  overflow-x: auto; font: 13px/1.45 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; white-space: pre; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: .9em; }
details { border: 1px solid var(--line); border-radius: 6px; padding: .3rem .7rem; background: var(--bg); }
details > summary { cursor: pointer; color: var(--fg); overflow-wrap: anywhere; }
details.reasoning { color: var(--muted); font-style: italic; }
.outcome.ok { color: var(--good); }
.outcome.error { color: var(--bad); }
.outcome.pending { color: var(--muted); }
.label { margin: .5rem 0 .2rem; font-size: .8rem; color: var(--muted); }
.cut { font-size: .85rem; color: var(--muted); font-style: italic; }
.excluded { opacity: .55; }
.why { color: var(--bad); font-size: .88rem; margin: .2rem 0; opacity: 1; }
aside.note { border-left: 3px solid var(--accent); background: var(--panel); padding: .3rem .8rem; margin: .4rem 0;
  font-size: .9rem; }
aside.note p { margin: .3rem 0; }
blockquote { margin: .5rem 0; padding-left: .8rem; border-left: 3px solid var(--line); color: var(--muted); }
@media (max-width: 50rem) { .layout { display: block; } nav.toc { position: static; max-height: none;
  border-right: 0; border-bottom: 1px solid var(--line); } }
@media print { .layout { display: block; } nav.toc { position: static; max-height: none; border: 0; }
  pre { white-space: pre-wrap; } }
"""

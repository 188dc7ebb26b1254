"""What ``--help`` adds to each command's own text: the command groups and the examples.

Every example is a real invocation; tests parse each one against the command line.
"""

COMMAND_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Reading", ("conversations", "turns", "show", "find", "check", "transcript", "project")),
    ("Summaries", ("summarize", "summary")),
    ("Editing", ("edit", "fork", "repair", "strip")),
    ("Asking the assistant", ("query",)),
    ("Keeping summaries current", ("watch",)),
    ("Serving the assistant", ("mcp",)),
    ("Getting started", ("demo",)),
)

EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "": (
        ("turnmark demo", "See everything at work on a temporary copy of example conversations."),
        ("turnmark turns", "One line per turn of the most recent conversation."),
        ("turnmark summarize --all --dry-run", "Which turns would get a summary, without calling a model."),
    ),
    "conversations": (
        ("turnmark conversations", "Every conversation of the workspace: turns, summaries, link problems."),
        ("turnmark conversations --format json", "The same as data, for scripts."),
    ),
    "turns": (
        ("turnmark turns", "The turns of the most recent conversation, with their summaries."),
        ("turnmark turns 17727484633", "The turns of conversation jp-c17727484633."),
        ("turnmark -w ~/src/app turns --format json", "The turns as JSON, from another workspace."),
    ),
    "show": (
        ("turnmark show 17727484633 --last 3 --reasoning", "Read its last three turns, with the reasoning."),
        ("turnmark show 17727484633 -o session.html", "One self-contained HTML page to share (md and json too)."),
        ("turnmark show --turns 2-5 --format md --tools names", "Turns 2 to 5 as Markdown, tool calls one line each."),
    ),
    "find": (
        ("turnmark find 'lock timeout -flaky'", "Turns about a lock timeout but not flaky ones, best first."),
        ("turnmark find 'cargo*' --in tools,results --output ids", "CONV:TURN lines for transcript --turn."),
        ("turnmark find --regex 'E0\\d{3}' --in results", "Scan the tool results with a regex (exact, slower)."),
    ),
    "check": (
        ("turnmark check", "Explain every request link of the most recent conversation that no longer resolves."),
        ("turnmark check --all", "Check every conversation (exit 1 when something is unresolved)."),
    ),
    "transcript": (
        ("turnmark transcript --turn 3", "What a summary model reads about turn 3."),
        ("turnmark transcript 17727484633 --turn k3m9x2a", "The same for the turn with that event_id."),
    ),
    "project": (
        ("turnmark project", "What the assistant model is sent, one line per event; warnings on stderr."),
        ("turnmark project --provider anthropic", "The exact JSON body the Anthropic Messages API would receive."),
    ),
    "summarize": (
        ("turnmark summarize --all --dry-run", "Which turns would be summarized, in which batches; nothing is sent."),
        ("turnmark summarize", "Summarize the most recent conversation with the configured model."),
        ("turnmark summarize --all --model ollama/llama3.2:3b", "Summarize everything with a local Ollama model."),
    ),
    "summary": (
        ("turnmark summary set 17727484633 2 'Fix the lock timeout'", "Set your own summary for turn 2."),
        ("turnmark summary clear 17727484633 k3m9x2a", "Remove the summary of that turn (catch-up writes a new one)."),
    ),
    "summary set": (
        ("turnmark summary set 17727484633 2 'Fix the lock timeout'", "Set your own summary for turn 2."),
        ("turnmark summary set 17727484633 k3m9x2a 'Plan the cache' -F json", "Name the turn by ID; print JSON."),
    ),
    "summary clear": (
        ("turnmark summary clear 17727484633 k3m9x2a", "Remove the summary of that turn (catch-up writes a new one)."),
        ("turnmark summary clear 17727484633 0 --format json", "The same for turn 0, saying what is stored, as JSON."),
    ),
    "edit": (
        ("turnmark edit -i", "Drop, reorder or rewrite events of the most recent conversation in your editor."),
        ("turnmark edit -i 17727484633 --yes", "Edit jp-c17727484633; save even what drops an overlay, unasked."),
        ("turnmark edit --undo 17727484633", "Take the last edit of that conversation back."),
    ),
    "fork": (
        ("turnmark fork --last 2 --edit", "A new conversation from the last two turns, opened in edit -i."),
        ("turnmark fork 17727484633 --until 2", "Keep turns 0-2, to ask turn 3's question differently."),
    ),
    "repair": (
        ("turnmark repair --all", "The fixes every conversation needs; nothing is written."),
        ("turnmark repair --apply", "Make the fixes that follow from the conversation alone."),
        ("turnmark repair -i 17727484633", "Decide, one question at a time, what to do with the rest."),
    ),
    "strip": (
        ("turnmark strip --all", "What would be removed so an older JP opens the conversations again."),
        ("turnmark strip 17727484633 --apply", "Remove turnmark's keys from that conversation."),
    ),
    "query": (
        ("turnmark query 'Why does the lock test fail?'", "Ask in the most recent conversation; the answer streams."),
        ("turnmark query --new 'Plan the storage refactor'", "Start a new conversation."),
        ("turnmark query --no-persist --model ollama/llama3.2:3b 'Summarize'", "Ask a local model; write nothing."),
    ),
    "watch": (
        ("turnmark watch", "Keep the current workspace summarized until Ctrl-C or SIGTERM."),
        ("turnmark watch --once --format json", "Catch up everything now, one JSON object per line logged."),
        ("turnmark watch -w ~/src/app -w ~/src/lib --settle 10", "Watch two workspaces; wait 10 s after changes."),
    ),
    "mcp": (
        ("turnmark mcp", "Serve this workspace's turns to an assistant over stdio (an MCP client starts it)."),
        (
            "turnmark -w ~/src/app mcp --max-chars 8000",
            "Another workspace's turns; answers of at most 8,000 characters.",
        ),
    ),
    "demo": (
        ("turnmark demo", "Run the tour on a temporary copy; nothing of yours is touched."),
        ("turnmark demo --keep", "The same, keeping the copy to try the commands on."),
    ),
}

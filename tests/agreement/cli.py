"""turnmark's CLI run in this process for the agreement tests: what it prints, with the workspace's path hidden."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from typer.testing import CliRunner

from turnmark.core.stream.event_ids import sequential_ids
from turnmark.shell.cli.main import Settings, app
from turnmark.shell.usecases import parallel

ENV = {"COLUMNS": "200", "TERMINAL_WIDTH": "200", "NO_COLOR": "1", "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}


class Cli:
    """``turnmark --workspace ROOT [OPTIONS] …`` in this process."""

    def __init__(self, root: Path, *options: str) -> None:
        self.root = root
        self.options = options
        self.stderr = ""

    def __call__(self, *args: str) -> tuple[int, str]:
        """The exit code and standard output (a traceback is re-raised: no command may end in one)."""
        result = CliRunner().invoke(
            app, ["--workspace", str(self.root), *self.options, *args], obj=Settings(new_id=sequential_ids()), env=ENV
        )
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        self.stderr = result.stderr
        return result.exit_code, result.stdout.replace(str(self.root), "<ws>")

    def json(self, *args: str) -> dict[str, object]:
        code, out = self("--format", "json", *args)
        try:
            found = json.loads(out)
        except ValueError:
            raise AssertionError(
                f"turnmark {' '.join(args)}: exit {code}, not JSON: {out[:300]!r}; stderr: {self.stderr[:300]!r}"
            ) from None
        assert isinstance(found, dict)
        return found


def conversation_names(cli: Cli) -> list[str]:
    """The IDs of the workspace's conversations, as ``conversations`` lists them."""
    rows = cli.json("conversations")["conversations"]
    assert isinstance(rows, list)
    return [str(row["id"]) for row in rows]


@contextmanager
def workers_forced() -> Iterator[None]:
    """Work over two or more conversations is spread over worker processes (however few there are)."""
    before = parallel.WORTH_A_WORKER
    parallel.WORTH_A_WORKER = 1
    try:
        yield
    finally:
        parallel.WORTH_A_WORKER = before

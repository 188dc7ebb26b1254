"""The shell's one error family: every exception the shell raises derives from ``TurnmarkError``.

``str()`` of each is one line that names the file and the place (or the model, or the option), ready to
print after ``error:``; the command line catches ``TurnmarkError`` alone.
"""

from __future__ import annotations

from pathlib import Path

from turnmark.core.text.summary_text import one_line, truncate
from turnmark.shell.secrets import redacted


class TurnmarkError(Exception):
    """Anything turnmark cannot do; ``str()`` is one line for the user."""


class WorkspaceError(TurnmarkError):
    """A workspace or conversation could not be found; the message says what to do."""


class ConversationError(TurnmarkError):
    """A conversation cannot be read or written; ``str()`` is a one-line message naming the file and place."""


class FileFault(ConversationError):
    """A file could not be written, or may not be (it is a link); ``str()`` is one line."""


class ConversationLocked(ConversationError):
    """Another process (``jp`` or turnmark) holds the conversation's lock."""


class SaveRefused(ConversationError):
    """The save rule (``core/stream/save_rule.py``) refuses to write the conversation; ``str()`` says why."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")


class StateFolderRefused(TurnmarkError):
    """turnmark's cache or state folder would lie inside a workspace it works on; nothing is read or written."""


class ConfigProblem(TurnmarkError):
    """A configuration source cannot be used; ``str()`` names it."""


class QueryError(TurnmarkError):
    """The query cannot run; ``str()`` is one line."""


class WorkerDied(TurnmarkError):
    """A worker process (``--jobs``) ended without finishing its conversation: killed, or out of memory."""


class SearchUnavailable(TurnmarkError):
    """This Python's SQLite cannot hold ``find``'s index (no FTS5)."""


class EditAborted(TurnmarkError):
    """The user aborted (empty plan, editor failure); nothing was written."""


class ModelError(TurnmarkError):
    """A model call failed; ``str()`` is one short, clean line (server text may hold anything).

    Keys are redacted from the whole message before it is made one line and cut.
    """

    def __init__(self, message: str) -> None:
        super().__init__(truncate(redacted(one_line(redacted(message))), 400))


class ModelUnreachable(ModelError):
    """No connection could be made to the model's server (refused, no route, no such host, connect timeout)."""


class ModelTruncated(ModelError):
    """The answer was cut off by the answer's token limit (``finish_reason: length`` and kin)."""


class ModelRejected(ModelError):
    """The server refused the request in a way a retry cannot change (400, 401, 403, 404, 422, a schema error)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def reraise_interrupt(error: BaseException) -> None:
    """Raise ``KeyboardInterrupt`` when ``error`` came from one: a Ctrl-C that cut a database call short surfaces
    as the error of its clean-up (``no such savepoint``), which a fallback must not take for a broken cache."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            raise KeyboardInterrupt from None
        seen.add(id(cause))
        cause = cause.__context__ or cause.__cause__


class BadRows(TurnmarkError):
    """Turn rows of these conversations in ``find``'s index are not of the types turnmark writes: index them
    again from their files."""

    def __init__(self, conversations: frozenset[str]) -> None:
        super().__init__(", ".join(sorted(conversations)))
        self.conversations = conversations


class ProtocolError(TurnmarkError):
    """A line from ``jp`` that is not a message of its plugin protocol (said in one line)."""

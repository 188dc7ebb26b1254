"""How many turns of a conversation could still want a summary: what the workspace cache keeps per
conversation so that ``summarize --all`` and ``watch`` leave the others unread (``catchup.waiting`` counts them)."""

from typing import NamedTuple


class Waiting(NamedTuple):
    """How many turns could still want a summary (what the workspace cache keeps instead of reading again).

    ``before_last``: turns before the last one with a request and no summary; ``last``: the last turn
    is such a turn and is complete; ``extractive``: turns whose summary ``--upgrade`` would rewrite.
    """

    before_last: int = 0
    last: bool = False
    extractive: int = 0

    def may_need_summaries(self, *, upgrade: bool) -> bool:
        """False only when ``summary_candidates`` finds nothing, whatever the lock and the transcript limit."""
        return self.before_last > 0 or self.last or (upgrade and self.extractive > 0)

"""How many turns of a conversation could still want a summary: what the workspace cache keeps per
conversation so that ``summarize --all`` and ``watch`` leave the others unread (``catchup.waiting`` counts them)."""

from typing import NamedTuple


class Waiting(NamedTuple):
    """How many turns could still want a summary (what the workspace cache keeps instead of reading again).

    ``before_last``: the candidates while the last turn may be open; ``last``: the last turn is one more
    once it is closed; ``extractive``: how many more ``--upgrade`` takes (offline summaries it rewrites).
    ``catchup.waiting`` counts them with ``summary_candidates``' own rule.
    """

    before_last: int = 0
    last: bool = False
    extractive: int = 0

    def may_need_summaries(self, *, upgrade: bool) -> bool:
        """False only when ``summary_candidates`` finds nothing, whatever the lock and the transcript limit."""
        return self.before_last > 0 or self.last or (upgrade and self.extractive > 0)

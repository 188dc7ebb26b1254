"""The shell's one error for a conversation that cannot be read or written."""


class ConversationError(Exception):
    """A conversation cannot be read or written; ``str()`` is a one-line message naming the file and place."""

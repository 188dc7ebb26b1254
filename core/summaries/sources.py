"""Who wrote a turn's summary: the sources a summary names that turnmark gives a meaning to (any other is a
model's ID)."""

USER = "user"
"""The source of a summary the user set (``turnmark summary set``)."""
EXTRACTIVE = "builtin/extractive"
"""The offline summarizer's model ID, the source of the summaries it writes."""

"""Full-text search over turns (``turnmark find``): what text of a turn goes into which scope, how a
user's query becomes an FTS5 expression, the ranking weights, the snippet around a match, and when a
conversation's files changed since they were indexed.

Imports ``core.summaries`` and below.
"""

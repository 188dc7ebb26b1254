"""Text as people and models are shown it: one line, terminal-safe, keys redacted, summary text normalized.

The lowest layer of the core: it imports nothing of turnmark.
"""

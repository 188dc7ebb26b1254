"""What a model API is sent and how its answers read: model IDs, chat and summary request bodies, parameters.

Imports ``core.summaries`` and below.
"""

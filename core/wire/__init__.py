"""What a model API is sent and how its answers read: model IDs, chat and summary request
bodies, parameters, context windows, and streamed answers read as parts.

Imports ``core.summaries`` and below.
"""

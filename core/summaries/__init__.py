"""Turn summaries (RFD 126): transcripts, fingerprints, packing, catch-up planning and batching, the summary
request and its quality gate, the memory of failed answers, a user's own labels, the offline summarizer, and
when ``watch`` looks at a conversation again.

Imports ``core.links`` and below.
"""

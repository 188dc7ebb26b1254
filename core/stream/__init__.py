"""The JP stream format and its stable event IDs (RFD 097).

Payloads, entries, the byte-exact codec and its storage encoding, timestamps,
duplicate keys, event IDs, turns, ``ConversationStream`` with its turn builder
and JP's ``sanitize``, configuration as data, and conversation metadata.
Imports only ``core.text`` and ``core.errors``.
"""

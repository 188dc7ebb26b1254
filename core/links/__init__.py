"""Request links (RFD 098): resolution, exclusion of unresolved answers, compaction overlays, the provider view.

Also the ``check`` report, which says what is unresolved and why. Imports ``core.stream`` and below.
"""

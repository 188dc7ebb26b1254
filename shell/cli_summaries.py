"""The commands around turn summaries: ``summarize``, ``transcript``, ``label``."""

from __future__ import annotations

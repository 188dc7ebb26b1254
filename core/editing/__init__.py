"""Changing a conversation's history: D21's edit files and plan, ``repair``, ``strip`` and ``fork``.

The top of the core: it may import every other core package.
"""

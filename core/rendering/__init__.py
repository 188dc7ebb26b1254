"""A conversation as something to read and share (``turnmark show``): the reader's view and its formats.

The top of the core: it may use every package below it, and nothing in the core builds on it.
"""

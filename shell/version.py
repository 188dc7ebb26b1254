"""turnmark's version as the installed package's metadata records it (``--version``)."""

from importlib import metadata


def installed() -> str:
    return metadata.version("turnmark")

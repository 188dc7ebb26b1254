"""What every run of a use case is given: the model, config overrides, the environment, HTTP settings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """How model calls use the network: timeouts, retries with back-off, the largest answer accepted."""

    connect_timeout: float = 5.0
    read_timeout: float = 60.0
    retries: int = 3
    connect_retries: int = 1
    """A refused connection is tried again this often (a server that is starting), quickly."""
    connect_backoff: float = 0.25
    backoff: float = 1.0
    backoff_cap: float = 30.0
    max_response_bytes: int = 1_048_576


@dataclass(frozen=True)
class RunSettings:
    """The settings summarize, query, watch and edit share: ``--model``, ``--cfg``, environment, HTTP.

    ``environ`` is ``None`` for the process's own environment.
    """

    model: str | None = None
    cfg: Sequence[str] = ()
    environ: Mapping[str, str] | None = None
    http: HttpSettings = field(default_factory=HttpSettings)

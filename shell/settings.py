"""What every run of a use case is given: the model, config overrides, the environment, HTTP settings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self


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

    Each use case's options extend it with their own (keyword-only) fields. ``environ`` is ``None`` for the
    process's own environment.
    """

    model: str | None = None
    cfg: Sequence[str] = ()
    environ: Mapping[str, str] | None = None
    http: HttpSettings = field(default_factory=HttpSettings)

    @classmethod
    def using(cls, run: RunSettings, **own: Any) -> Self:
        """These options, with ``run``'s model, config overrides, environment and HTTP settings."""
        return cls(model=run.model, cfg=run.cfg, environ=run.environ, http=run.http, **own)

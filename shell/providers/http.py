"""HTTP for model providers: timeouts, bounded retries, a response size cap, keys kept secret.

One place that speaks httpx, so each provider module only builds bodies and
reads answers. Retries cover refused connections, 429 and 5xx, with
exponential backoff (or the server's ``Retry-After``), capped. Nothing here
ever puts a request header (where keys live) into an error.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from turnmark.shell.errors import ModelError, ModelRejected, ModelUnreachable
from turnmark.shell.secrets import keep_secret, redacted
from turnmark.shell.settings import HttpSettings

ERROR_DETAIL_CHARS = 300
FINAL_STATUSES = frozenset({400, 401, 403, 404, 422})
_SCHEMA_PROBLEM = re.compile(r"schema|validat|grammar", re.IGNORECASE)
_ERROR_BODY_BYTES = 65_536


class Http:
    """An httpx client for one provider; ``secret`` (its key) never appears in a message or output.

    ``address`` says where the base URL is set and its default; a failed connection names it.
    """

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        settings: HttpSettings,
        secret: str | None = None,
        address: str = "",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.address = f" (is the server running? its address is {address})" if address else ""
        self.settings = settings
        if secret:
            keep_secret(secret)
        timeout = httpx.Timeout(settings.read_timeout, connect=settings.connect_timeout)
        self._client = httpx.Client(headers=headers, timeout=timeout)

    def __repr__(self) -> str:
        return f"Http({self.base_url!r})"

    def close(self) -> None:
        self._client.close()

    def _pause(self, attempt: int, response: httpx.Response | None) -> None:
        delay = min(self.settings.backoff * 2**attempt, self.settings.backoff_cap)
        after = response.headers.get("retry-after") if response is not None else None
        if after and after.isascii() and after.replace(".", "", 1).isdigit():
            delay = min(float(after), self.settings.backoff_cap)
        time.sleep(delay)

    def _describe(self, response: httpx.Response) -> str:
        """The status and the start of the body, redacted first and only then cut."""
        head = b""
        for chunk in response.iter_bytes():
            head += chunk
            if len(head) >= _ERROR_BODY_BYTES:
                break
        detail = redacted(head[:_ERROR_BODY_BYTES].decode("utf-8", "replace"))[:ERROR_DETAIL_CHARS]
        return f"{self.base_url} answered HTTP {response.status_code}" + (f": {detail}" if detail.strip() else "")

    def _capped_lines(self, response: httpx.Response, url: str, should_stop: Callable[[], bool]) -> Iterator[str]:
        """The body's lines, counting every byte received against the cap (a line never grows unbounded)."""
        limit = self.settings.max_response_bytes
        received = 0
        pending = b""
        for chunk in response.iter_bytes():
            received += len(chunk)
            if received > limit:
                raise ModelError(f"{url}: the answer exceeded {limit} bytes")
            if should_stop():
                raise ModelError("cancelled")
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                yield line.rstrip(b"\r").decode("utf-8", "replace")
        if pending:
            yield pending.rstrip(b"\r").decode("utf-8", "replace")

    def _refusal(self, response: httpx.Response) -> ModelError:
        """The error for a failed status: ``ModelRejected`` when no retry can change it."""
        message = self._describe(response)
        status = response.status_code
        if status in FINAL_STATUSES or (status == 500 and _SCHEMA_PROBLEM.search(message)):
            return ModelRejected(message, status)
        return ModelError(message)

    @contextmanager
    def _errors(self, url: str) -> Iterator[None]:
        """httpx's exceptions as ``ModelUnreachable`` (no connection) or ``ModelError``, one line each."""
        try:
            yield
        except httpx.ConnectTimeout:
            raise ModelUnreachable(
                f"{url}: no answer to the connection within {self.settings.connect_timeout:g}s{self.address}"
            ) from None
        except httpx.TimeoutException as error:
            raise ModelError(f"{url}: timed out ({type(error).__name__})") from None
        except httpx.ConnectError as error:
            raise ModelUnreachable(f"{url}: cannot connect: {error}{self.address}") from None
        except httpx.HTTPError as error:
            raise ModelError(f"{url}: {type(error).__name__}: {error}") from None

    def stream_lines(self, path: str, body: Any, should_stop: Callable[[], bool] = lambda: False) -> Iterator[str]:
        """POST ``body`` and yield the response's lines as they arrive (retrying before the first byte).

        429 and 5xx are retried with backoff; a refused connection is retried quickly
        (``connect_retries``); a status no retry can change is not retried.
        """
        url = self.base_url + path
        attempt = refused = 0
        while True:
            with self._errors(url):
                try:
                    with self._client.stream("POST", url, json=body) as response:
                        if response.status_code >= 400:
                            error = self._refusal(response)
                            retryable = response.status_code == 429 or response.status_code >= 500
                            if retryable and attempt < self.settings.retries and not isinstance(error, ModelRejected):
                                self._pause(attempt, response)
                                attempt += 1
                                continue
                            raise error
                        yield from self._capped_lines(response, url, should_stop)
                        return
                except httpx.ConnectError:
                    if refused >= self.settings.connect_retries:
                        raise
                    refused += 1
                    time.sleep(self.settings.connect_backoff)

    def get_json(self, path: str) -> Any:
        """GET ``path`` as JSON (for model details); a failure raises ``ModelError``."""
        url = self.base_url + path
        with self._errors(url), self._client.stream("GET", url) as response:
            if response.status_code >= 400:
                raise self._refusal(response)
            body = "\n".join(self._capped_lines(response, url, lambda: False))
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            raise ModelError(f"{url}: the answer is not JSON") from None

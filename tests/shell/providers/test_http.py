"""The one mapping of httpx's exceptions: which error, which message, and which failures are tried again."""

from __future__ import annotations

import httpx
import pytest

from turnmark.shell.errors import ModelError, ModelUnreachable
from turnmark.shell.providers.http import Http
from turnmark.shell.settings import HttpSettings

URL = "http://127.0.0.1:9"
SETTINGS = HttpSettings(connect_timeout=1.5, retries=2, connect_retries=2, connect_backoff=0.0, backoff=0.0)


def failing_http(error: Exception) -> tuple[Http, list[str]]:
    """An ``Http`` whose every request fails with ``error``, and the methods it was asked for."""
    asked: list[str] = []

    def fail(request: httpx.Request) -> httpx.Response:
        asked.append(request.method)
        raise error

    http = Http(URL, {}, SETTINGS)
    http._client = httpx.Client(transport=httpx.MockTransport(fail))
    return http, asked


def test_a_refused_connection_is_tried_again_when_streaming_only() -> None:
    http, asked = failing_http(httpx.ConnectError("refused"))
    with pytest.raises(ModelUnreachable, match=f"^{URL}/api/chat: cannot connect: refused$"):
        list(http.stream_lines("/api/chat", {}))
    assert asked == ["POST"] * (SETTINGS.connect_retries + 1)
    asked.clear()
    with pytest.raises(ModelUnreachable, match=f"^{URL}/api/tags: cannot connect: refused$"):
        http.get_json("/api/tags")
    assert asked == ["GET"]


@pytest.mark.parametrize(
    ("error", "kind", "message"),
    [
        (httpx.ConnectTimeout("slow"), ModelUnreachable, "no answer to the connection within 1.5s"),
        (httpx.ReadTimeout("slow"), ModelError, "timed out (ReadTimeout)"),
        (httpx.RemoteProtocolError("peer closed"), ModelError, "RemoteProtocolError: peer closed"),
    ],
)
def test_each_failure_is_one_error_with_the_same_words_for_both_requests(
    error: Exception, kind: type[ModelError], message: str
) -> None:
    http, asked = failing_http(error)
    with pytest.raises(kind) as streamed:
        list(http.stream_lines("/v1/messages", {}))
    assert str(streamed.value) == f"{URL}/v1/messages: {message}"
    with pytest.raises(kind) as got:
        http.get_json("/v1/messages")
    assert str(got.value) == f"{URL}/v1/messages: {message}"
    assert asked == ["POST", "GET"]

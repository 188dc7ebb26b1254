"""One model behind one API: the shared client, summary answers and chat answers, with the errors raised.

Bodies and the reading of answers are ``core.wire``'s; a subclass names its
chat path, its headers, its answer reader and where its context window is found.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator

from turnmark.core.stream.json_value import JsonObject
from turnmark.core.summaries.request import SummaryRequest
from turnmark.core.wire.answers import ChatPart, answer_text
from turnmark.core.wire.models import ModelSpec
from turnmark.core.wire.summary_bodies import summary_body
from turnmark.shell.errors import ModelError, ModelTruncated
from turnmark.shell.lazy import lazy_imports
from turnmark.shell.settings import HttpSettings

with lazy_imports():
    from turnmark.shell.providers import http


class Provider(ABC):
    """A provider for one model; ``api_key`` (if any) never appears in a message, a repr or output."""

    def __init__(
        self, model: ModelSpec, base_url: str, settings: HttpSettings, api_key: str | None = None, address: str = ""
    ) -> None:
        self.model = model
        self.http = http.Http(base_url, self.headers(api_key), settings, secret=api_key, address=address)

    @property
    def endpoint(self) -> str:
        """The server's base URL (a run stops asking one that did not answer)."""
        return self.http.base_url

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model.id!r})"

    def close(self) -> None:
        """Close the client's connections (a long-lived ``watch`` opens one provider a catch-up)."""
        self.http.close()

    def headers(self, api_key: str | None) -> dict[str, str]:
        """The headers every request carries."""
        return {}

    @property
    @abstractmethod
    def path(self) -> str:
        """Where chat and summary bodies are posted."""

    @abstractmethod
    def parts(self, lines: Iterable[str]) -> Iterator[ChatPart]:
        """The streamed answer's lines read as parts (``core.wire.answers``)."""

    @abstractmethod
    def context_window(self) -> int | None:
        """The model's context window, when the provider tells it."""

    def complete(self, request: SummaryRequest, should_stop: Callable[[], bool] = lambda: False) -> str:
        """The text of the structured answer to ``request``; ``ModelTruncated`` when the token limit cut it off."""
        text = answer_text(self.chat(summary_body(self.model, request), should_stop))
        if text is None:
            raise ModelTruncated(f"{self.model.provider}: the answer was cut off by the token limit")
        return text

    def chat(self, body: JsonObject, should_stop: Callable[[], bool] = lambda: False) -> Iterator[ChatPart]:
        """Stream the answer to ``body``: text, reasoning, tool calls and stop parts; an error part is raised."""
        for part in self.parts(self.http.stream_lines(self.path, body, should_stop)):
            if part.kind == "error":
                raise ModelError(part.text)
            yield part

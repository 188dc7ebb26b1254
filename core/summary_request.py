"""The summary request a model receives and the checks its answer must pass.

The answer is a JSON object ``{"summaries": {"<turn_id>": "<summary>"}}``.
RFD 126 shows both this object and an array of ``{turn_id, summary}``; the
object keyed by turn ID wins here, because strict structured output (OpenAI's
``strict`` mode, grammar-constrained local models) needs every key named in
the schema, and naming exactly the packed IDs as required properties does
that. Anything the model returns for other IDs is discarded; a summary that
is blank, longer than 72 characters, or holds a line break, a control
character or an escape sequence is refused, and its turn stays for the next
run.
"""

import json
from dataclasses import dataclass

from returns.result import Failure, Result, Success

from .json_value import JsonObject
from .packing import (
    ANSWER_OVERHEAD_TOKENS,
    ANSWER_TOKENS_PER_TURN,
    DEFAULT_CONTEXT_WINDOW,
    Candidate,
    estimate_tokens,
)
from .turn_summary import normalize_summary

MAX_CHARS = 60
HARD_LIMIT = 72

INSTRUCTIONS = f"""You label the turns of a conversation between a user and a coding assistant.
Each <turn id="..."> block holds one turn: the user's request, the tools the assistant called
(<tool_call name="..."/>, then <tool_result/> or <tool_error/>), and the assistant's answers.

For every turn, write one summary of what the turn asked for and what it accomplished:
- concise and factual, a single line of at most {MAX_CHARS} characters;
- specific (name the file, command, error or decision), no filler such as "The user asks";
- when the request is a short follow-up ("continue", "yes, do option 2", a pasted error),
  describe what the turn actually did.
Answer with a JSON object {{"summaries": {{"<turn id>": "<summary>"}}}} with exactly one entry
for each turn id given. Do not mention these instructions."""


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """What is sent: instructions, the turns' transcripts, and the JSON schema of the answer."""

    system: str
    user: str
    schema: JsonObject
    turn_ids: tuple[str, ...]
    context_window: int = DEFAULT_CONTEXT_WINDOW
    """The window the batch was packed for (Ollama must be told, or it cuts the prompt to its default)."""
    answer_tokens: int = ANSWER_OVERHEAD_TOKENS + ANSWER_TOKENS_PER_TURN
    """Room for the answer: the reserve the budget kept free."""


def summary_schema(turn_ids: tuple[str, ...]) -> JsonObject:
    """``summaries`` lists exactly the packed turn IDs as required string properties."""
    return {
        "type": "object",
        "properties": {
            "summaries": {
                "type": "object",
                "properties": {
                    turn_id: {"type": "string", "description": f"One line, at most {MAX_CHARS} characters."}
                    for turn_id in turn_ids
                },
                "required": list(turn_ids),
                "additionalProperties": False,
            }
        },
        "required": ["summaries"],
        "additionalProperties": False,
    }


def summary_request(packed: tuple[Candidate, ...], context_window: int | None = None) -> SummaryRequest:
    turn_ids = tuple(candidate.turn_id for candidate in packed)
    body = "\n\n".join(candidate.transcript for candidate in packed)
    window = context_window if context_window and context_window > 0 else DEFAULT_CONTEXT_WINDOW
    answer = ANSWER_OVERHEAD_TOKENS + ANSWER_TOKENS_PER_TURN * len(turn_ids)
    return SummaryRequest(INSTRUCTIONS, body, summary_schema(turn_ids), turn_ids, window, answer)


PROMPT_TOKENS = estimate_tokens(INSTRUCTIONS) + 200
"""The instructions plus the schema, estimated like transcripts (for the request budget)."""


@dataclass(frozen=True, slots=True)
class SummaryAnswer:
    """The usable summaries by turn ID, and a one-line reason for each turn that got none."""

    summaries: dict[str, str]
    refused: dict[str, str]


@dataclass(frozen=True, slots=True)
class AnswerError:
    """The answer as a whole is unusable (not JSON, not the schema's shape)."""

    message: str


def _refusal(text: object) -> str | None:
    if not isinstance(text, str):
        return "not a string"
    if any(char in text for char in "\n\r\x0b\x0c\u2028\u2029"):
        return "more than one line"
    if any(ord(char) < 32 or ord(char) == 127 or 0x80 <= ord(char) < 0xA0 for char in text):
        return "control characters or escape sequences"
    normalized = normalize_summary(text)
    if normalized is None:
        return "blank"
    if len(normalized) > HARD_LIMIT:
        return f"{len(normalized)} characters (the limit is {HARD_LIMIT})"
    return None


def parse_summaries(answer: str, turn_ids: tuple[str, ...]) -> Result[SummaryAnswer, AnswerError]:
    """Check a model's answer against the request: keep packed IDs only, one clean line each."""
    try:
        document = json.loads(answer)
    except (ValueError, RecursionError):
        return Failure(AnswerError("the answer is not JSON"))
    summaries = document.get("summaries") if isinstance(document, dict) else None
    if not isinstance(summaries, dict):
        return Failure(AnswerError('the answer has no "summaries" object'))
    accepted: dict[str, str] = {}
    refused: dict[str, str] = {}
    for turn_id in turn_ids:
        if turn_id not in summaries:
            refused[turn_id] = "missing from the answer"
            continue
        reason = _refusal(summaries[turn_id])
        if reason is None:
            accepted[turn_id] = normalize_summary(summaries[turn_id]) or ""
        else:
            refused[turn_id] = reason
    return Success(SummaryAnswer(accepted, refused))

"""The summary request a model receives and the checks its answer must pass.

The answer is a JSON object ``{"summaries": {"<turn_id>": "<summary>"}}``.
RFD 126 shows both this object and an array of ``{turn_id, summary}``; the
object keyed by turn ID wins here, because strict structured output (OpenAI's
``strict`` mode, grammar-constrained local models) needs every key named in
the schema, and naming exactly the packed IDs as required properties does
that, and ``maxLength`` bounds each summary for grammar-constrained servers.
Anything the model returns for other IDs is discarded. A summary is
normalized to what can be kept (its first non-empty line, controls and
escape sequences removed, white space collapsed, cut at a word boundary with
``…`` to 72 characters); one with nothing left, or not a string, is refused,
and so is one the quality gate refuses (``summary_gate``: a turn ID, no
letters, fewer than two words or 8 characters, copied from this prompt, or
another turn's summary in the same answer). A refused turn stays for the
next run.
"""

import json
from collections.abc import Collection
from dataclasses import dataclass

from returns.result import Failure, Result, Success

from turnmark.core.errors import AnswerError
from turnmark.core.stream.json_value import JsonObject
from turnmark.core.summaries.gate import HARD_LIMIT, gate, known_ids
from turnmark.core.summaries.packing import (
    ANSWER_OVERHEAD_TOKENS,
    ANSWER_TOKENS_PER_TURN,
    DEFAULT_CONTEXT_WINDOW,
    Candidate,
    estimate_tokens,
)
from turnmark.core.text.summary_text import salvage_summary

MAX_CHARS = 60

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

SUMMARY_DESCRIPTION = f"One line, at most {MAX_CHARS} characters."
"""The schema's description of each summary."""

FIXED_PROMPT = f"{INSTRUCTIONS}\n\n{SUMMARY_DESCRIPTION}"
"""Every fixed text a model is sent with the transcripts: a summary copied from it is refused."""


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """What is sent: instructions, the turns' transcripts, and the JSON schema of the answer.

    ``system`` goes as the system prompt, ``user`` (the transcripts) as the user message,
    ``schema`` as the provider's structured-output schema.

    >>> from turnmark.core import Candidate, build_summary_request
    >>> request = build_summary_request((Candidate("a1aaaaa", 0, '<turn id="a1aaaaa">...</turn>', 10, ""),))
    >>> request.system.splitlines()[0]
    'You label the turns of a conversation between a user and a coding assistant.'
    >>> request.user, request.turn_ids, request.context_window, request.answer_tokens
    ('<turn id="a1aaaaa">...</turn>', ('a1aaaaa',), 8192, 104)
    """

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
                    turn_id: {
                        "type": "string",
                        "maxLength": HARD_LIMIT,
                        "description": SUMMARY_DESCRIPTION,
                    }
                    for turn_id in turn_ids
                },
                "required": list(turn_ids),
                "additionalProperties": False,
            }
        },
        "required": ["summaries"],
        "additionalProperties": False,
    }


def build_summary_request(packed: tuple[Candidate, ...], context_window: int | None = None) -> SummaryRequest:
    """The request for the packed turns: the answer's schema names exactly their IDs, each at most 72 characters.

    >>> from turnmark.core import (ChatRequest, ChatResponse, ConversationStream, build_summary_request,
    ...     plan_summaries, sequential_ids, summary_candidates)
    >>> ts = "2026-01-02 10:00:00.0"
    >>> stream = ConversationStream.empty({}, new_id=sequential_ids())
    >>> stream = stream.start_turn(ChatRequest(ts, "Fix the build")).push(ChatResponse(ts, "message", "Fixed."))
    >>> stream = stream.start_turn(ChatRequest(ts, "Add a test")).push(ChatResponse(ts, "message", "Added."))
    >>> packing = plan_summaries(summary_candidates(stream, last_turn_may_be_open=False), None, 5)
    >>> request = build_summary_request(packing.packed)
    >>> print(request.user)
    <turn id="e000001">
    <request>Fix the build</request>
    <response>Fixed.</response>
    </turn>
    <BLANKLINE>
    <turn id="e000004">
    <request>Add a test</request>
    <response>Added.</response>
    </turn>
    >>> answer = request.schema["properties"]["summaries"]
    >>> answer["required"], answer["properties"]["e000001"]["maxLength"], answer["additionalProperties"]
    (['e000001', 'e000004'], 72, False)
    """
    turn_ids = tuple(candidate.turn_id for candidate in packed)
    body = "\n\n".join(candidate.transcript for candidate in packed)
    window = context_window if context_window and context_window > 0 else DEFAULT_CONTEXT_WINDOW
    answer = ANSWER_OVERHEAD_TOKENS + ANSWER_TOKENS_PER_TURN * len(turn_ids)
    return SummaryRequest(INSTRUCTIONS, body, summary_schema(turn_ids), turn_ids, window, answer)


PROMPT_TOKENS = estimate_tokens(INSTRUCTIONS) + 200
"""The instructions plus the schema, estimated like transcripts (for the request budget)."""


@dataclass(frozen=True, slots=True)
class SummaryAnswer:
    """The usable summaries by turn ID, and a one-line reason for each turn that got none.

    >>> from turnmark.core import parse_summaries
    >>> answer = parse_summaries('{"summaries": {"a1aaaaa": "Build fixed"}}', ("a1aaaaa", "b2bbbbb")).unwrap()
    >>> answer.summaries, answer.refused
    ({'a1aaaaa': 'Build fixed'}, {'b2bbbbb': 'missing from the answer'})
    """

    summaries: dict[str, str]
    refused: dict[str, str]


def parse_summaries(
    answer: str, turn_ids: tuple[str, ...], conversation_turn_ids: Collection[str] = ()
) -> Result[SummaryAnswer, AnswerError]:
    """Check a model's answer against the request: keep packed IDs only, one clean line each, past the gate.

    ``turn_ids`` are the request's (``SummaryRequest.turn_ids``); ``conversation_turn_ids``
    are every turn ID of the conversation (a summary that is one of them is refused).
    Summaries for other turns are discarded; a summary is cut to its first line, cleaned
    of controls and escape sequences, and shortened at a word boundary to 72 characters;
    a blank one is refused, and so is one the quality gate refuses (``summary_gate``).

    >>> from turnmark.core import parse_summaries
    >>> text = '{"summaries": {"a1aaaaa": "Fixed the build.\\\\nThen more.", "b2bbbbb": "  ", "zzzzzzz": "Hi"}}'
    >>> answer = parse_summaries(text, ("a1aaaaa", "b2bbbbb", "c3ccccc")).unwrap()
    >>> answer.summaries
    {'a1aaaaa': 'Fixed the build.'}
    >>> answer.refused
    {'b2bbbbb': 'blank', 'c3ccccc': 'missing from the answer'}
    >>> parse_summaries('{"summaries": {"a1aaaaa": "x", "b2bbbbb": "k3m9x2a"}}', ("a1aaaaa", "b2bbbbb"),
    ...                 ("k3m9x2a", "a1aaaaa", "b2bbbbb")).unwrap().refused
    {'a1aaaaa': 'refused: "x" has fewer than two words', 'b2bbbbb': 'refused: "k3m9x2a" is a turn ID, not a summary'}
    """
    try:
        document = json.loads(answer)
    except (ValueError, RecursionError):
        return Failure(AnswerError("the answer is not JSON"))
    summaries = document.get("summaries") if isinstance(document, dict) else None
    if not isinstance(summaries, dict):
        return Failure(AnswerError('the answer has no "summaries" object'))
    salvaged: dict[str, str] = {}
    refused: dict[str, str] = {}
    for turn_id in turn_ids:
        if turn_id not in summaries:
            refused[turn_id] = "missing from the answer"
            continue
        text = summaries[turn_id]
        kept = salvage_summary(text, HARD_LIMIT) if isinstance(text, str) else None
        if kept is None:
            refused[turn_id] = "not a string" if not isinstance(text, str) else "blank"
        else:
            salvaged[turn_id] = kept
    gated = gate(salvaged, turn_ids, known_ids(turn_ids, conversation_turn_ids), FIXED_PROMPT)
    refused.update(gated.refused)
    in_order = {turn_id: refused[turn_id] for turn_id in turn_ids if turn_id in refused}
    return Success(SummaryAnswer(gated.accepted, in_order))

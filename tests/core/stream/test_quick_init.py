"""``quick_init``: the stream's frozen dataclasses, made through their slots, are the dataclasses' own."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from types import ModuleType

import pytest

from turnmark.core.stream import codec, entries, payloads
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.event_ids import sequential_ids
from turnmark.core.stream.payloads import ToolCallResponse
from turnmark.core.stream.quick_init import quick_init
from turnmark.core.stream.turn_facts import TurnFacts
from turnmark.core.summaries.turn_rows import TurnRow


def frozen_dataclasses(module: ModuleType) -> list[type]:
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and value.__module__ == module.__name__
        and dataclasses.is_dataclass(value)
        and value.__dataclass_params__.frozen  # type: ignore[attr-defined]
    ]


QUICK = [*(cls for module in (payloads, entries, codec) for cls in frozen_dataclasses(module)), TurnFacts, TurnRow]


def twin(cls: type) -> type:
    """The class as ``dataclass`` alone makes it (the long way)."""
    fields = [(field.name, field.type, field) for field in dataclasses.fields(cls)]
    return dataclasses.make_dataclass(cls.__name__, fields, frozen=True, slots=True)


def test_the_load_makes_its_values_quickly() -> None:
    names = {cls.__name__ for cls in QUICK}
    assert {"ChatRequest", "ToolCallResponse", "Entry", "Layout", "ReadEntry", "TurnFacts", "TurnRow"} <= names
    for cls in QUICK:
        assert "set_" + dataclasses.fields(cls)[0].name in vars(cls)["__init__"].__globals__, cls


@pytest.mark.parametrize("cls", QUICK, ids=lambda cls: cls.__name__)
def test_the_same_parameters_defaults_and_values(cls: type) -> None:
    long_way = twin(cls)
    assert inspect.signature(cls) == inspect.signature(long_way)
    fields = dataclasses.fields(cls)
    given = {field.name: object() for field in fields}
    for made in (cls(*given.values()), cls(**given)):
        assert {name: getattr(made, name) for name in given} == given
    required = [object() for field in fields if field.default is field.default_factory is dataclasses.MISSING]
    quick, slow = cls(*required), long_way(*required)
    assert [getattr(quick, field.name) for field in fields] == [getattr(slow, field.name) for field in fields]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(quick, fields[0].name, object())
    if required:
        with pytest.raises(TypeError):
            cls()


def test_a_read_entry_travels_and_copies_as_before() -> None:
    """What a worker pool does to the values a load made (pickle), and ``copy``, ``replace``, ``match``."""
    events = (
        b'[{"type": "config_delta", "timestamp": "2026-01-02 10:00:00.0", "delta": {}},'
        b' {"type": "tool_call_response", "timestamp": "2026-01-02 10:00:01.0", "id": "c1",'
        b' "content": "b2s=", "is_error": false, "extra": 1}]'
    )
    stream = ConversationStream.from_json(events, None, new_id=sequential_ids()).unwrap()
    entry = stream.entries[0]
    assert isinstance(entry.payload, ToolCallResponse)
    assert entry.payload.stored == "b2s="
    for copied in (pickle.loads(pickle.dumps(entry)), copy.copy(entry), copy.deepcopy(entry)):
        assert copied == entry
        assert (copied.layout.extra, copied.layout.output) == ((("extra", 1),), "b2s=")
        assert isinstance(copied.payload, ToolCallResponse)
        assert copied.payload.content == "ok"
    changed = dataclasses.replace(entry.payload, content="new")
    assert (changed.content, changed.stored, changed.id) == ("new", None, "c1")
    match entry.payload:
        case ToolCallResponse(_, call_id, content):
            assert (call_id, content) == ("c1", "ok")
        case _:
            raise AssertionError(entry.payload)


@pytest.mark.parametrize("cls", QUICK, ids=lambda cls: cls.__name__)
def test_wrong_arguments_are_refused_in_the_same_words(cls: type) -> None:
    long_way = twin(cls)
    count = len(dataclasses.fields(cls))
    assert vars(cls)["__init__"].__module__ == cls.__module__
    calls = [(tuple(range(count + 1)), {}), ((), {"nothing": 1}), ((1,), {dataclasses.fields(cls)[0].name: 1})]
    for args, options in calls:
        with pytest.raises(TypeError) as quick:
            cls(*args, **options)
        with pytest.raises(TypeError) as slow:
            long_way(*args, **options)
        assert str(quick.value) == str(slow.value)


def test_other_classes_are_refused() -> None:
    @dataclasses.dataclass(slots=True)
    class Mutable:
        name: str

    @dataclasses.dataclass(frozen=True)
    class Unslotted:
        name: str

    @dataclasses.dataclass(frozen=True, slots=True)
    class KeywordOnly:
        name: str = dataclasses.field(kw_only=True)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Made:
        items: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        name: str

        def __post_init__(self) -> None:
            pass

    @dataclasses.dataclass(frozen=True, slots=True)
    class Inheriting(payloads.ChatRequest):
        more: int = 0

    for cls in (Mutable, Unslotted, KeywordOnly, Made, Checked, Inheriting):
        with pytest.raises(TypeError, match="quick_init"):
            quick_init(cls)

"""``quick_init``: the stream's frozen dataclasses, made through their slots, are the dataclasses' own."""

from __future__ import annotations

import dataclasses
import inspect
from types import ModuleType

import pytest

from turnmark.core.stream import codec, entries, payloads
from turnmark.core.stream.quick_init import quick_init


def frozen_dataclasses(module: ModuleType) -> list[type]:
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and value.__module__ == module.__name__
        and dataclasses.is_dataclass(value)
        and value.__dataclass_params__.frozen  # type: ignore[attr-defined]
    ]


QUICK = [cls for module in (payloads, entries, codec) for cls in frozen_dataclasses(module)]


def twin(cls: type) -> type:
    """The class as ``dataclass`` alone makes it (the long way)."""
    fields = [(field.name, field.type, field) for field in dataclasses.fields(cls)]
    return dataclasses.make_dataclass(cls.__name__, fields, frozen=True, slots=True)


def test_the_load_makes_its_values_quickly() -> None:
    names = {cls.__name__ for cls in QUICK}
    assert {"ChatRequest", "ToolCallResponse", "Entry", "Layout", "ReadEntry"} <= names
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

    for cls in (Mutable, Unslotted, KeywordOnly, Made, Checked):
        with pytest.raises(TypeError, match="quick_init"):
            quick_init(cls)

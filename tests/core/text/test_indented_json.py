import json
import math

from hypothesis import given
from hypothesis import strategies as st

from turnmark.core.text.indented_json import indented

ODD_TEXT = st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF))
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | ODD_TEXT
VALUES = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(ODD_TEXT, children, max_size=4),
    max_leaves=30,
)


@given(VALUES)
def test_the_same_text_as_the_standard_librarys_indenting_encoder(value: object) -> None:
    assert indented(value) == json.dumps(value, ensure_ascii=False, indent=2)


def test_the_tokens_msgspec_would_write_otherwise_are_kept_as_python_writes_them() -> None:
    value = {"big": 1e16, "small": 1e-7, "huge": 10**40, "neg": -0.0, "empty": [[], {}], "esc": '\x1b"\\/\u2028'}
    text = indented(value)
    assert '"big": 1e+16' in text
    assert '"small": 1e-07' in text
    assert f'"huge": {10**40}' in text
    assert text == json.dumps(value, ensure_ascii=False, indent=2)


def test_what_msgspec_cannot_read_takes_the_long_way() -> None:
    for value in ({"x": math.nan}, [math.inf, -math.inf], {"lone": "\ud800"}, "\udcff"):
        assert indented(value) == json.dumps(value, ensure_ascii=False, indent=2)

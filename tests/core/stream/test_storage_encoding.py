"""JP's lenient base64 storage encoding (jp-format §2.11)."""

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnmark.core.stream.storage_encoding import decode_leaves, decode_string, encode_leaves, encode_string


def test_canonical_base64_of_utf8_is_decoded() -> None:
    assert decode_string(base64.b64encode("héllo ✓".encode()).decode()) == "héllo ✓"


@pytest.mark.parametrize(
    "text",
    [
        "hello world",  # plaintext typed by hand
        "YQ",  # missing padding
        "YR==",  # non-zero trailing bits: Rust's STANDARD engine rejects it
        "a-b_",  # URL-safe alphabet from an older JP writer
        "YWJj\n",  # whitespace
        "/w==",  # valid base64 of a byte that is not UTF-8
        "héllo",  # not ASCII
        "YQ\\u003d\\u003d",  # a JSON escape is not base64, even if it would unescape to some
    ],
)
def test_non_canonical_strings_are_kept_as_written(text: str) -> None:
    assert decode_string(text) == text


def test_encoding_is_unconditional_so_plaintext_is_encoded_on_save() -> None:
    assert encode_string("hello world") == "aGVsbG8gd29ybGQ="
    assert encode_string("a-b_") == base64.b64encode(b"a-b_").decode()


def test_leaves_are_decoded_recursively_and_keys_and_scalars_left_alone() -> None:
    stored = {"path": "c3JjL2xpYi5ycw==", "n": 3, "flag": True, "none": None, "list": ["eA==", "as typed", 1]}
    kept: set[str] = set()
    decoded = decode_leaves(stored, kept)
    assert decoded == {"path": "src/lib.rs", "n": 3, "flag": True, "none": None, "list": ["x", "as typed", 1]}
    assert kept == {"as typed"}
    assert encode_leaves(decoded, frozenset(kept)) == stored
    assert encode_leaves(decoded)["list"][1] == "YXMgdHlwZWQ="


def reference_decode(text: str) -> str:
    """The rule as jp-format §2.11 states it for Python: strict decode, re-encode check, UTF-8."""
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        return text
    if base64.b64encode(raw).decode() != text:
        return text
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return text


base64_like = st.one_of(
    st.text(alphabet='ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ \n\\"u', max_size=16),
    st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode()),
    st.text(max_size=8).map(lambda t: base64.b64encode(t.encode()).decode()),
)


@given(base64_like)
def test_decoding_agrees_with_the_stated_rule(text: str) -> None:
    assert decode_string(text) == reference_decode(text)


@pytest.mark.parametrize("text", ["YW==", "YR==", "YWJ=", "YWJjZB=="])
def test_every_non_zero_trailing_bit_pattern_is_rejected(text: str) -> None:
    assert decode_string(text) == text

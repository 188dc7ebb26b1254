"""JP's lenient base64 storage encoding (jp-format §2.11)."""

import base64

import pytest

from turnmark.core.storage_encoding import decode_leaves, decode_string, encode_leaves, encode_string


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
    ],
)
def test_non_canonical_strings_are_kept_as_written(text: str) -> None:
    assert decode_string(text) == text


def test_encoding_is_unconditional_so_plaintext_is_encoded_on_save() -> None:
    assert encode_string("hello world") == "aGVsbG8gd29ybGQ="
    assert encode_string("a-b_") == base64.b64encode(b"a-b_").decode()


def test_leaves_are_decoded_recursively_and_keys_and_scalars_left_alone() -> None:
    stored = {"path": "c3JjL2xpYi5ycw==", "n": 3, "flag": True, "none": None, "list": ["eA==", 1]}
    assert decode_leaves(stored) == {"path": "src/lib.rs", "n": 3, "flag": True, "none": None, "list": ["x", 1]}
    assert encode_leaves(decode_leaves(stored)) == stored

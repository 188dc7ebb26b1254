"""The kinds' tags the light reader reads by (``core/stream/kinds.py``) are the payloads' own."""

from operator import attrgetter

from turnmark.core.stream import kinds, payloads

tag_of = attrgetter("type_tag")


def test_the_event_tags_are_the_conversation_events_in_jp_s_order() -> None:
    assert tuple(map(tag_of, payloads.CONVERSATION_EVENT_TYPES)) == kinds.EVENT_TAGS


def test_the_linkable_tags_are_the_answering_kinds() -> None:
    assert set(map(tag_of, payloads.LINKABLE_TYPES)) == kinds.LINKABLE_TAGS
    assert payloads.ChatRequest.type_tag == kinds.REQUEST_TAG

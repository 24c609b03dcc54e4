"""oxmem's own keyword search (core/formats/keywords.py): the one-pass index finds exactly what looking in each
event's text finds, in the same order, whatever the texts and words (ties, case, letters that fold to two)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from oxmem_gui.core.formats.keywords import index, rank_keywords
from oxmem_gui.core.store.events import Event

LETTERS = st.sampled_from(["a", "b", "A", "ß", "ss", "İ", "i", " ", "\x00", "é"])
TEXT = st.lists(LETTERS, max_size=12).map("".join)


def slow(sessions, query, top_k):
    """The search as its docstring says it, event by event."""
    words = [w for w in dict.fromkeys(w.casefold() for w in query.split()) if "\x00" not in w]
    found = []
    for sid, events in sessions:
        for e in events:
            folded = e.payload["content"].casefold().replace("\x00", " ")
            held = [w for w in words if w in folded]
            if held:
                found.append((-len(held), -e.sequence, sid))
    return [(sid, -neg_seq, -neg) for neg, neg_seq, sid in sorted(found)[:top_k]]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["s1", "s2", "s3"]), st.integers(1, 5), TEXT), max_size=25),
    st.lists(TEXT.filter(lambda t: t.strip()), min_size=1, max_size=3).map(" ".join),
    st.integers(1, 6),
)
def test_the_index_finds_what_looking_in_each_text_finds(rows, query, top_k):
    sessions: dict[str, list[Event]] = {}
    for sid, sequence, text in rows:
        sessions.setdefault(sid, []).append(Event(sequence, "", {"role": "user", "content": text}))
    listed = list(sessions.items())
    result = rank_keywords(index(listed), query, "s1", top_k)
    words = len([w for w in dict.fromkeys(w.casefold() for w in query.split()) if "\x00" not in w])
    assert [(h.session_id, h.sequence_start, round(h.score * words)) for h in result.hits] == slow(
        listed, query, top_k
    )

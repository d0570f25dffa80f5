"""Name stems: the faster routes of ``name_stems`` give the keys the piece-by-piece rule gives.

The store's search index and the answerer's linking both read ``name_stems``: a
stem that changed would change answers, so the shortcuts (a written word's stems
cached whole, a number taken as one piece) are checked against the rule written
out in full here, on names like the ones memories hold and on any text.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxneo import text
from ctxneo.text import index_keys, name_stems, split_words, stem, tokens


def _pieces_in_full(raw: str) -> tuple[str, ...]:
    """``text._pieces`` without its shortcuts: the regex split of every word."""
    if raw.endswith("s") and text._ACRONYM_PLURAL.search(raw):
        raw = text._ACRONYM_PLURAL.sub(r"\1", raw)
    return tuple(p for part in text._CAMEL.split(raw) for p in part.split("'") if p)


def _stems_in_full(name: str) -> tuple[str, ...]:
    """The stems of ``name`` a piece at a time, as ``name_stems`` was first written."""
    out: list[str] = []
    for raw in text._WORD.findall(name):
        if "'" in raw or "’" in raw:
            raw = raw.replace("’", "'")
            if raw[-2:] in ("'s", "'S"):
                raw = raw.split("'")[0]
        out += [stem(p.lower()) for p in _pieces_in_full(raw)]
    return tuple(out)


NAMES = [
    "Svc_Amber_Gateway_1042",
    "Team_Jade_7",
    "Ticket_0047",
    "AuthModule",
    "HTTPServer2",
    "GPUs",
    "AWS us-east-1",
    "Service_Checkout's",
    "3.0.0",
    "12,000",
    "0.5",
    "x²",  # "²" is a digit to isdigit, a letter to the regex: split from "x"
    "1²",
    "௧௨",  # Tamil digits: decimal, one piece
    "٣4",
    "Ünïcode_Näme_12",
    "pump nine",
    "",
    "___",
    "one",
]


def test_name_stems_of_typical_names_are_the_stems_piece_by_piece() -> None:
    for name in NAMES:
        assert name_stems(name) == _stems_in_full(name), name
        assert name_stems(name) == tuple(stem(w) for w in split_words(name)), name
        assert index_keys(name) == frozenset(_stems_in_full(name)), name


def test_a_number_is_one_piece_as_the_regex_split_makes_it() -> None:
    for raw in ["1042", "0047", "0", "௧௨", "٣٤٥", "1²", "²"]:
        assert text._pieces(raw) == _pieces_in_full(raw), raw


@settings(max_examples=400, deadline=None)
@given(
    st.text(
        st.one_of(
            st.sampled_from("aZq_-'’ .,0179²௧٣sSPUHT"),
            st.characters(codec="utf-8"),
        ),
        max_size=24,
    )
)
def test_name_stems_of_any_text_are_the_stems_piece_by_piece(name: str) -> None:
    text.name_stems.cache_clear()  # (computed afresh, not found from an earlier example)
    assert name_stems(name) == _stems_in_full(name)
    assert name_stems(name) == _stems_in_full(name)  # and again, from the caches


def test_an_a_that_cannot_be_the_article_is_a_letter_of_a_name() -> None:
    def letter(text: str) -> bool:
        (a,) = [t for t in tokens(text) if t.word == "a"]
        return not a.stop

    assert letter("is it in stack room A?")  # (an article goes before its noun)
    assert letter("A's keys are where?")
    assert letter("where is lot 7731-a now")
    assert letter("Plan A, then")
    assert not letter("is this a test?")
    assert not letter("where is a van")
    # A capital inside a sentence is a letter (the article is written "a" there); one
    # opening a sentence, or in text written all in capitals, may be the article.
    assert letter("dryer A load?") and letter("who runs the A shift today")
    assert not letter("A van is where?") and not letter("done. A van left")
    assert not letter("WHERE IS A VAN")

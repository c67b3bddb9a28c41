"""Escape sequences leave outside text whole (docs/security.md): no ESC, BEL or C1 control
survives any remover of controls, a sequence goes with all its bytes, and text without a
control, ``[31m`` written out included, is left as it is."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from sourcewise.text.sanitize import drop_escapes, strip_controls
from sourcewise.text.words import printable

TERMINAL = frozenset(["\x1b", "\x07", *map(chr, range(0x80, 0xA0))])
# Ordinary text: anything but C0 and C1 controls (tab and newline allowed), "[31m"-like pieces often.
PLAIN = st.lists(
    st.text(
        st.characters(exclude_categories=["Cs", "Cf"], exclude_characters=[*TERMINAL, *map(chr, range(32))]),
        max_size=10,
    )
    | st.sampled_from(["[31m", "]0;title", "[", "]", "\\", ";", "\n", "\t", "m", "0"]),
    max_size=8,
).map("".join)
PARAMS = st.text(st.sampled_from("0123456789;:<=>?"), max_size=8)
CSI = st.builds(
    lambda intro, params, middle, final: intro + params + middle + final,
    st.just("\x1b["),
    PARAMS,
    st.text(st.sampled_from(" !\"#$%&'()*+,-./"), max_size=2),
    st.sampled_from("@ABCDHJKmhlrsu~"),
)
STRING = st.builds(
    lambda intro, body, end: intro + body + end,
    st.sampled_from(["\x1b]", "\x1bP", "\x1b_", "\x1b^", "\x1bX"]),
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20),
    st.sampled_from(["\x07", "\x1b\\", "\x9c"]),
)
OTHER = st.sampled_from(["\x1b(B", "\x1b)0", "\x1b7", "\x1b8", "\x1bc", "\x1b=", "\x1b>", "\x1bM", "\x1b#8"])


@given(st.text())
@example("# Title\x1b]0;PWNED\x07 with \x1b[31mred\x1b[0m")
@example("\x1b]0;unended title")
@example("\x1b[31")
def test_no_escape_bell_or_c1_survives(text: str) -> None:
    for cleaned in (strip_controls(text), strip_controls(text, keep="\n\t"), printable(text)):
        assert TERMINAL.isdisjoint(cleaned), repr(cleaned)


@given(PLAIN)
@example("[31mred[0m ]0;PWNED with a \\ and 가나다")
def test_text_without_controls_is_untouched(text: str) -> None:
    assert drop_escapes(text) == text
    assert printable(text) == text


@given(st.lists(st.tuples(PLAIN, CSI | STRING | OTHER), max_size=5), PLAIN)
@example([("# Title", "\x1b]0;PWNED\x07"), (" with ", "\x1b[31m"), ("red", "\x1b[0m")], "")
def test_each_sequence_goes_whole_and_the_text_around_it_stays(
    pieces: list[tuple[str, str]], tail: str
) -> None:
    text = "".join(plain + sequence for plain, sequence in pieces) + tail
    assert drop_escapes(text) == "".join(plain for plain, _ in pieces) + tail


@given(PLAIN, st.sampled_from([chr(c) for c in range(0x80, 0xA0)]), PLAIN)
def test_an_8_bit_control_goes_alone_and_the_text_after_it_stays(
    before: str, control: str, after: str
) -> None:
    """Found in review: U+009D (an 8-bit OSC) had taken the rest of its line with it, and mojibake
    holds it often (a curly quote read as Latin-1: "\u00e2\x80\x9d")."""
    assert drop_escapes(before + control + after) == before + after
    assert (
        drop_escapes("He said \u00e2\x80\x9cyes.\u00e2\x80\x9d Then more.")
        == "He said \u00e2yes.\u00e2 Then more."
    )

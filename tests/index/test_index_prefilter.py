"""The definition prefilter's line-wise match gives exactly the whole-file regex answer."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from srcreview.index.index import _line_match, definition_pattern

NAMES = st.sampled_from([b"get_model", b"Attention", b"x", b"VllmConfig"])
LINES = st.lists(st.one_of(
    st.sampled_from([b"def get_model(a):", b"class Attention(Base):", b"    x = 1", b"x == 2", b"Attention: int",
                     b"  get_model = None", b"y = get_model()", b"async def VllmConfig():", b"VllmConfig:=3",
                     b"# class Attention", b"defget_model", b"\tx\t: int", b""]),
    st.binary(max_size=20)), max_size=12)


@settings(max_examples=400, deadline=None)
@given(name=NAMES, lines=LINES, scopes_only=st.booleans(), final_newline=st.booleans())
def test_line_match_equals_whole_file_search(name, lines, scopes_only, final_newline):
    data = b"\n".join(lines) + (b"\n" if final_newline else b"")
    pattern = definition_pattern(name, scopes_only)
    assert _line_match(data, name, pattern) == (pattern.search(data) is not None)

"""A call's raises as its caller sees them (srcreview.interp.events): a callee that raises on
every path by several raises names each and its condition; one that may raise hands each raise
on as a possible one, never as certain."""

from __future__ import annotations

from types import SimpleNamespace

from srcreview.interp.events import MAY_RAISE_LIMIT, Condition, RaiseEvent, may_raise, raises_on_every_path

SYMBOL = SimpleNamespace(qualname="pkg.Config._validate", path="pkg/config.py", local="_validate")
OPEN = Condition("not HAS_TRITON", 10, 10, "bound more than once at import time", True)


def test_one_raise_is_that_raise():
    event = RaiseEvent(11, 11, "ValueError('no')", ())
    raised = raises_on_every_path(SYMBOL, [event])
    assert raised.certain and raised.text == "ValueError('no')"
    assert raised.chain == (("pkg.Config._validate", "pkg/config.py", 11, 11, "ValueError('no')"),)


def test_several_raises_are_named_with_the_conditions_that_choose():
    first = RaiseEvent(11, 11, "ValueError('requires Triton')", (OPEN,))
    second = RaiseEvent(14, 16, "ValueError('unsupported')", ())
    raised = raises_on_every_path(SYMBOL, [first, second])
    assert raised.certain  # the call raises whichever way: the statement ends here
    assert raised.text == "one of ValueError('requires Triton') (if not HAS_TRITON); ValueError('unsupported')"
    assert [entry[2] for entry in raised.chain] == [11, 14]
    assert raised.chain[0][4].endswith("(if not HAS_TRITON)")


def test_the_same_exception_twice_keeps_one_text():
    raised = raises_on_every_path(SYMBOL, [RaiseEvent(11, 11, "ValueError(None)", (OPEN,)),
                                           RaiseEvent(20, 21, "ValueError(None)", ())])
    assert raised.text == "ValueError(None)" and len(raised.chain) == 2


def test_a_callee_that_may_raise_hands_on_possible_raises_only():
    certain_inside = RaiseEvent(11, 11, "ValueError('x')", ())
    looped = RaiseEvent(12, 12, "KeyError('y')", (), in_loop=True)
    handed = may_raise(SYMBOL, [certain_inside, looped])
    assert [e.certain for e in handed] == [False, False]
    assert handed[0].conditions[0].reason == "the callee also returns"
    assert handed[1].in_loop and handed[1].chain[0][:3] == ("pkg.Config._validate", "pkg/config.py", 12)


def test_possible_raises_are_bounded():
    many = [RaiseEvent(n, n, f"ValueError({n})", (OPEN,)) for n in range(MAY_RAISE_LIMIT + 10)]
    assert len(may_raise(SYMBOL, many)) == MAY_RAISE_LIMIT

"""The attempt log's packed RNG states restore the generator exactly and store few keys."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.ui.rng_states import RngStateLog, unpack_rng_state

# one step between packed states: draw this many 32-bit words, or re-seed / set the stream elsewhere
_steps = st.lists(
    st.one_of(
        st.integers(min_value=0, max_value=3 * 624 + 5).map(lambda n: ("words", n)),
        st.integers(min_value=0, max_value=2**32).map(lambda n: ("seed", n)),
        st.just(("gauss", 0)),
    ),
    max_size=40,
)


def _step(rng: random.Random, kind: str, n: int) -> None:
    if kind == "words":
        if n:
            rng.getrandbits(32 * n)
    elif kind == "seed":
        rng.seed(n)
    else:
        rng.gauss(0.0, 1.0)  # leaves gauss_next set: part of the state


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    steps=_steps,
    every=st.integers(min_value=1, max_value=5),
    search=st.integers(min_value=1, max_value=4),
)
def test_every_packed_state_unpacks_to_the_generators_state(
    seed: int, steps: list[tuple[str, int]], every: int, search: int
) -> None:
    rng = random.Random(seed)
    log = RngStateLog(checkpoint_every=every, max_search=search)
    packed = [(log.pack(rng), rng.getstate())]
    for kind, n in steps:
        _step(rng, kind, n)
        packed.append((log.pack(rng), rng.getstate()))
    for p, expected in packed:
        assert unpack_rng_state(p) == expected
        assert p[2] <= every  # twists past the stored key


def test_states_restore_the_stream_and_store_one_key_per_checkpoint() -> None:
    rng = random.Random(7)
    log = RngStateLog(checkpoint_every=4)
    states = []
    draws = []
    for _ in range(50):
        states.append(log.pack(rng))
        draws.append([rng.random() for _ in range(40)])  # 80 words per step: a twist every ~8 steps
    for packed, expected in zip(states, draws, strict=True):
        other = random.Random(0)
        other.setstate(unpack_rng_state(packed))
        assert [other.random() for _ in range(40)] == expected
    # 50 x 80 words = 4,000 words: the first key and 6 twists, a key stored every 4 twists
    assert [s[2] for s in states].count(0) >= 1
    assert sorted({(id(s[1]), s[2]) for s in states}, key=lambda t: t[1])[-1][1] <= 4
    assert log.stored_keys == 2
    assert len({id(s[1]) for s in states}) == 2


def test_a_long_stream_keeps_a_few_keys() -> None:
    rng = random.Random(0)
    log = RngStateLog()
    states = []
    for _ in range(2_000):
        states.append((log.pack(rng), rng.getstate()))
        rng.getrandbits(32 * 700)  # about one twist per step, as the spreading file's tie-breaks draw
    twists = -(-1_999 * 700 // 624)  # the seeded generator twists at its first word
    assert twists // 64 <= log.stored_keys <= twists // 63 + 1  # a step may cross a checkpoint
    for p, expected in states[::97]:
        assert unpack_rng_state(p) == expected


def test_a_changed_stream_starts_a_new_key_and_bad_arguments_are_refused() -> None:
    rng = random.Random(1)
    log = RngStateLog()
    a = log.pack(rng)
    rng.seed(2)
    b = log.pack(rng)
    assert log.stored_keys == 2 and a[1] != b[1] and b[2] == 0
    assert unpack_rng_state(b) == rng.getstate()
    with pytest.raises(ValueError, match="must be >= 1"):
        RngStateLog(checkpoint_every=0)

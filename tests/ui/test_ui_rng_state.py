"""The attempt log's packed RNG states restore the generator exactly and share key words."""

from __future__ import annotations

import random

from kubesched.ui.history import pack_rng_state, unpack_rng_state


def test_packed_states_restore_the_stream_and_share_unchanged_key_words() -> None:
    rng = random.Random(7)
    states = []
    draws = []
    prev = None
    for _ in range(50):
        prev = pack_rng_state(rng, prev)
        states.append(prev)
        draws.append([rng.random() for _ in range(40)])  # 80 words per step: a regeneration every ~8 steps
    for packed, expected in zip(states, draws, strict=True):
        other = random.Random(0)
        other.setstate(unpack_rng_state(packed))
        assert [other.random() for _ in range(40)] == expected
    keys = {id(s[1]) for s in states}
    assert len(keys) == len({s[1] for s in states})  # one bytes object per distinct key
    assert 5 <= len(keys) <= 9
    assert unpack_rng_state(pack_rng_state(rng)) == rng.getstate()

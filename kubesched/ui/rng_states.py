"""The scheduler's random state at every scheduling attempt of a run, kept small (no upstream
counterpart: kube-scheduler does not replay attempts).

An explanation re-runs one attempt with the generator exactly as it was, so the attempt log needs
the Mersenne Twister state (624 key words, a position, ``gauss_next``) before every attempt. The
key words change only when the generator regenerates them (the "twist", every 624 words drawn),
and each key is a fixed function of the one before it, so :class:`RngStateLog` stores a key only
every :attr:`RngStateLog.checkpoint_every` twists and, per attempt, how many twists the key is past
that stored key (:data:`RngState`). :func:`unpack_rng_state` twists a generator forward from the
stored key to rebuild the state.

The count of twists is exact: while packing, a private generator follows the stream's keys, and a
key is taken as the next one only when all 624 words are equal (the first word, tempered as the
generator outputs it, rules out a wrong candidate cheaply). A stream that is re-seeded or set to
another state (no match within :attr:`RngStateLog.max_search` twists) starts a new stored key.

At 20,000 attempts that draw about 700 words each (about 22,000 twists) this keeps about 340
stored keys (under 1 MiB) where one 2.5 KiB key per changed key took 37 MiB.
"""

from __future__ import annotations

import random
from array import array
from typing import Any

__all__ = ["RngState", "RngStateLog", "unpack_rng_state"]

#: ``(version, stored key as 624 uint32 words in bytes, twists past the stored key, position,
#: gauss_next)``: ``random.Random.getstate()``'s parts with the key words given by reference
RngState = tuple[int, bytes, int, int, float | None]

_N = 624  # key words of MT19937 (CPython's ``_randommodule.c``: ``N``)


def _temper(y: int) -> int:
    """MT19937's output function: the word ``getrandbits(32)`` returns for key word ``y``
    (``_randommodule.c: genrand_uint32``)."""
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    return y ^ (y >> 18)


class RngStateLog:
    """Packs the states of one ``random.Random`` stream at successive points (see the module
    docstring). ``checkpoint_every``: twists between stored keys (>= 1); ``max_search``: twists
    followed forward before a changed key is stored as a new one (>= 1)."""

    def __init__(self, checkpoint_every: int = 64, max_search: int = 64) -> None:
        if checkpoint_every < 1 or max_search < 1:
            raise ValueError("checkpoint_every and max_search must be >= 1")
        self.checkpoint_every = checkpoint_every
        self.max_search = max_search
        self._follower = random.Random(0)
        self._key: tuple[int, ...] | None = None  # the latest key seen, as getstate() gives it
        self._base: bytes = b""
        self._twists = 0
        #: stored keys so far (each a distinct bytes object)
        self.stored_keys = 0

    def pack(self, rng: random.Random) -> RngState:
        """``rng``'s state now, packed. The states of one log must come from one stream in the order
        it ran; a stream that was set elsewhere in between costs one stored key, nothing more."""
        version, internal, gauss = rng.getstate()
        key = internal[:-1]
        if key != self._key:
            twists = self._follow(version, key)
            if twists is None or self._twists + twists > self.checkpoint_every:
                self._store(version, key)
            else:
                self._twists += twists
            self._key = key
        return version, self._base, self._twists, internal[-1], gauss

    def _follow(self, version: int, key: tuple[int, ...]) -> int | None:
        """Twists the follower forward from the latest key until it holds ``key``: their number, or
        None (and the follower left anywhere) when there is no latest key or none matched."""
        if self._key is None:
            return None
        follower = self._follower
        first = _temper(key[0])
        for twists in range(1, self.max_search + 1):
            word = follower.getrandbits(32)  # position 624: twists, then returns the new key's first word
            if word == first and follower.getstate()[1][:-1] == key:
                follower.getrandbits(32 * (_N - 1))  # back to position 624 on this key
                return twists
            follower.getrandbits(32 * (_N - 1))
        return None

    def _store(self, version: int, key: tuple[int, ...]) -> None:
        self._base = array("I", key).tobytes()
        self._twists = 0
        self.stored_keys += 1
        self._follower.setstate((version, (*key, _N), None))


def unpack_rng_state(packed: RngState) -> tuple[Any, ...]:
    """The state :meth:`RngStateLog.pack` packed, for ``random.Random.setstate``. Twists a private
    generator forward from the stored key (about 3 microseconds a twist)."""
    version, base, twists, pos, gauss = packed
    key: tuple[int, ...] = tuple(array("I", base))
    if twists:
        g = random.Random(0)
        g.setstate((version, (*key, _N), None))
        for _ in range(twists - 1):
            g.getrandbits(32 * _N)
        g.getrandbits(32)
        key = g.getstate()[1][:-1]
    return version, (*key, pos), gauss

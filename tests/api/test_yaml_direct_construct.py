"""``FastLoader`` (direct construction of string-keyed mappings, sequences, strings and plain
decimal integers) loads exactly what PyYAML's safe loader loads: same values and same types, on
YAML 1.1 corner cases (octal and sexagesimal integers, ``on``/``yes`` keys, merge keys, aliases,
explicit tags, binary, dates) and on random documents written in both block and flow style."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.yaml_limits import FastLoader

SAFE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

CORNERS = """
a: 1
b: [0, 1, 012, 0o12, 1_000, -3, +4, 190:20:30, 99999999999999999999, 0b11, 0x1f, '7', !!int 8, 2.5, .inf]
c: &anchor {x: 1, y: [a, b]}
d: *anchor
e:
  <<: *anchor
  z: 3
f: !!str 12
g: {1: a, "1": b, null: c, 1.5: d}
h: 2001-12-14
i: !!binary aGVsbG8=
on: yes
"off": No
j: [~, null, Null, "", '']
k: !!set {p, q}
l: !!omap [{m: 1}, {n: 2}]
---
- plain
- {nested: [1, {deep: true}]}
---
just a string
---
"""


def _typed(v: Any) -> Any:
    """``v`` with every scalar paired with its type (so 1 and True, 1 and 1.0 differ)."""
    if isinstance(v, dict):
        return {_typed(k): _typed(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_typed(x) for x in v]
    if isinstance(v, set):
        return {_typed(x) for x in v}
    return (type(v).__name__, v)


def _load(text: str, loader: Any) -> Any:
    try:
        return _typed(list(yaml.load_all(text, Loader=loader)))  # noqa: S506 - safe loaders
    except yaml.YAMLError as e:
        return ("error", str(e))


def _same(text: str) -> None:
    assert _load(text, FastLoader) == _load(text, SAFE)


def test_corner_cases_load_as_the_safe_loader() -> None:
    _same(CORNERS)


def test_aliased_nodes_are_built_once_and_shared() -> None:
    doc = yaml.load("a: &x [1, {b: c}]\nd: *x\n", Loader=FastLoader)
    assert doc == {"a": [1, {"b": "c"}], "d": [1, {"b": "c"}]}
    assert doc["a"] is doc["d"]


scalars = st.one_of(
    st.text(max_size=8),
    st.integers(-(10**20), 10**20),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
    st.sampled_from(["012", "0x1f", "on", "yes", "1_0", "1:30", "~", "-0", "+7", "00"]),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.one_of(st.text(max_size=6), st.integers(0, 9), st.booleans()), inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(values, st.booleans())
def test_random_documents_load_as_the_safe_loader(value: Any, flow: bool) -> None:
    _same(yaml.safe_dump(value, default_flow_style=flow))
    # plain (unquoted) scalars as written by hand: the resolver, not the dumper, decides their type
    if isinstance(value, str) and "\n" not in value:
        _same(f"k: {value}\n")


@settings(max_examples=100, deadline=None)
@given(
    st.lists(values, min_size=1, max_size=4),
    st.lists(scalars.filter(lambda s: isinstance(s, str)), max_size=6),
)
def test_a_stream_of_documents_loads_as_the_safe_loader(docs: list[Any], plain: list[str]) -> None:
    # the loader remembers each plain scalar's tag for the stream: the same texts recur as keys,
    # values and sequence items across documents
    text = "---\n".join(yaml.safe_dump(d) for d in docs)
    lines = [s for s in plain if "\n" not in s and s.strip() == s and s]
    if lines:
        text += "---\n" + "".join(f"- {s}\n- [{s}]\n" for s in lines)
    _same(text + text)


@settings(max_examples=200, deadline=None)
@given(
    value=st.text(max_size=12)
    | st.sampled_from(["", "~", "yes", "0x1f", "1e3", ".inf", "<<", "=", "2025-01-01"]),
    plain=st.booleans(),
)
def test_resolve_by_text_answers_as_the_base_resolver(value: str, plain: bool) -> None:
    """The loader's ``resolve`` (a closure when there are no path resolvers) gives the tag
    ``BaseResolver.resolve`` gives, for scalars plain and quoted and for collections."""
    loader = FastLoader("")
    try:
        assert "resolve" in vars(loader)  # the per-text closure is in use
        for kind, val, implicit in [
            (yaml.ScalarNode, value, (plain, not plain)),
            (yaml.ScalarNode, value, (plain, not plain)),  # remembered
            (yaml.MappingNode, None, True),
            (yaml.SequenceNode, None, True),
        ]:
            assert loader.resolve(kind, val, implicit) == yaml.resolver.BaseResolver.resolve(
                loader, kind, val, implicit
            )
    finally:
        loader.dispose()


def test_a_loader_with_path_resolvers_keeps_the_base_methods() -> None:
    class PathLoader(FastLoader):  # type: ignore[misc,valid-type]
        pass

    class SafePathLoader(yaml.SafeLoader):
        pass

    for cls in (PathLoader, SafePathLoader):
        cls.add_path_resolver("tag:yaml.org,2002:int", ["spec", "replicas"], yaml.ScalarNode)
    loader = PathLoader("")
    try:
        assert not {"resolve", "descend_resolver", "ascend_resolver"} & set(vars(loader))
    finally:
        loader.dispose()
    # the path resolver applies: the quoted replicas becomes an int, as with the safe loader
    text = 'spec:\n  replicas: "3"\n  other: "4"\n'
    got = yaml.load(text, Loader=PathLoader)  # noqa: S506
    assert got == yaml.load(text, Loader=SafePathLoader) == {"spec": {"replicas": 3, "other": "4"}}  # noqa: S506


def test_a_loaded_stream_is_freed_without_the_cyclic_collector() -> None:
    """``load_all`` disposes of the loader: nothing keeps it (and the text it holds) alive."""
    import gc
    import weakref

    class Tracked(FastLoader):  # type: ignore[misc,valid-type]
        made: list[weakref.ref[Any]] = []

        def __init__(self, stream: Any) -> None:
            super().__init__(stream)
            Tracked.made.append(weakref.ref(self))

    gc.disable()
    try:
        assert list(yaml.load_all("a: 1\n---\nb: [x, 'y']\n", Loader=Tracked)) == [  # noqa: S506
            {"a": 1},
            {"b": ["x", "y"]},
        ]
        assert len(Tracked.made) == 1 and Tracked.made[0]() is None
    finally:
        gc.enable()

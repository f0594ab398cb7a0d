"""``start_server``'s keyword arguments are typed (:class:`ServerOptions`) and are exactly
``setup_server``'s, with the same types."""

from __future__ import annotations

import inspect
from typing import get_type_hints

from kubesched.embedded.apiserver import server
from kubesched.embedded.apiserver.server import ServerOptions, setup_server, start_server


def test_server_options_are_setup_servers_keyword_parameters() -> None:
    params = inspect.signature(setup_server).parameters
    keywords = [n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert list(ServerOptions.__annotations__) == keywords
    setup_hints = get_type_hints(setup_server, vars(server))
    option_hints = get_type_hints(ServerOptions, vars(server))
    assert option_hints == {n: setup_hints[n] for n in keywords}
    assert ServerOptions.__required_keys__ == frozenset()


def test_start_server_passes_its_options_on() -> None:
    with start_server(bookmark_interval=0.5, system_namespaces=False) as handle:
        assert handle.cluster.list("Namespace").items == []
    assert str(inspect.signature(start_server)) == (
        "(cluster: 'MemoryCluster | None' = None, **options: 'Unpack[ServerOptions]') -> 'ServerHandle'"
    )

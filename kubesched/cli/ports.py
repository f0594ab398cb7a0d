"""Ports given on the command line, checked before any work: a server command (``serve``, ``ui``)
whose port is taken says so at once, in the same one line the server would print when it binds
(``error: cannot listen on 127.0.0.1:8080 (--address, --port): Address already in use``, exit 2),
instead of after loading and simulating the snapshot."""

from __future__ import annotations

import socket

from kubesched.errors import ListenError

__all__ = ["check_listen"]


def check_listen(address: str, port: int, flags: str = "--address, --port") -> None:
    """Bind ``address:port`` once (with SO_REUSEADDR, as the servers bind) and release it. Port 0
    is always free. Raises :class:`~kubesched.errors.ListenError` naming ``flags``."""
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, sockaddr = infos[0]
        with socket.socket(family, kind, proto) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(sockaddr)
    except OSError as e:
        raise ListenError(address, port, flags, e) from None

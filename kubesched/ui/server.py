"""Serving the UI application: in the foreground (``kubesched ui``) or on a background thread
(:class:`UiServer`, for tests and embedding)."""

from __future__ import annotations

import asyncio
import secrets
import ssl
import threading
from collections.abc import Callable

from aiohttp import web

from kubesched.net.listener import LimitedSite, handler_args
from kubesched.ui.app import make_app
from kubesched.ui.security import is_loopback
from kubesched.ui.session import LiveSession, Session

__all__ = ["UiServer", "new_token"]


def new_token() -> str:
    """A random token for a UI bound to a non-loopback address (32 URL-safe characters)."""
    return secrets.token_urlsafe(24)


class UiServer:
    """The UI on ``address:port`` (``port=0``: any free port, see :attr:`port`) on its own thread
    and event loop, over HTTPS with ``ssl_context``. ``token`` is required (ValueError) when
    ``address`` is not loopback."""

    def __init__(
        self,
        *,
        session: Session | None = None,
        live: LiveSession | None = None,
        address: str = "127.0.0.1",
        port: int = 8080,
        token: str | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if not is_loopback(address) and not token:
            raise ValueError(f"a token is required to serve on the non-loopback address {address}")
        self.address = address
        self.port = port
        self.token = token
        self.ssl_context = ssl_context
        self.scheme = "https" if ssl_context is not None else "http"
        self._app = make_app(
            session=session,
            live=live,
            address=address,
            port_of=lambda: self.port,
            token=token,
            scheme=self.scheme,
        )
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        """``http(s)://address:port/`` (with ``?token=`` when a token is set)."""
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{self.scheme}://{host}:{self.port}/" + (f"?token={self.token}" if self.token else "")

    async def _start(self) -> None:
        self._runner = web.AppRunner(
            self._app, access_log=None, handle_signals=False, shutdown_timeout=2.0, **handler_args()
        )
        await self._runner.setup()
        site = LimitedSite(self._runner, self.address, self.port, ssl_context=self.ssl_context)
        await site.start()
        self.port = site.port  # the bound socket gives the port when 0 was asked

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._start())
        except BaseException as e:  # noqa: BLE001 - reported to start()
            self._error = e
            self._ready.set()
            return
        self._ready.set()
        self._loop.run_forever()

    def start(self) -> UiServer:
        """Bind and serve; returns once listening. Raises OSError when the port cannot be bound."""
        self._thread = threading.Thread(target=self._main, name="kubesched-ui", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        """Stop serving and join the thread."""
        if self._thread is None:
            return

        async def shutdown() -> None:
            if self._runner is not None:
                await self._runner.cleanup()

        fut = asyncio.run_coroutine_threadsafe(shutdown(), self._loop)
        try:
            fut.result(timeout=10)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._thread = None

    def serve_forever(self, on_ready: Callable[[str], None] | None = None) -> None:
        """Start, call ``on_ready(url)``, and block until KeyboardInterrupt, then stop."""
        self.start()
        if on_ready is not None:
            on_ready(self.url)
        try:
            while self._thread is not None and self._thread.is_alive():
                self._thread.join(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

"""Driving Debian's chromium with Playwright for the UI tests (skipped when either is missing).

The browser is never downloaded: ``/usr/bin/chromium`` (``apt-get install chromium``) is launched
headless with a fresh profile directory and no background networking."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("KUBESCHED_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: screenshots are written to docs/ui/ only when this variable is set
SCREENSHOTS_ENV = "KUBESCHED_UI_SCREENSHOTS"
DOCS_UI = Path(__file__).resolve().parent.parent / "docs" / "ui"


def require_browser() -> Any:
    """The ``playwright.sync_api`` module; skips the test when Playwright or chromium is absent."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"chromium not found at {CHROMIUM} (apt-get install chromium)")
    return sync_api


@contextmanager
def browser_page(profile_dir: Path, width: int = 1400, height: int = 900) -> Iterator[Any]:
    """A page of a fresh headless chromium (persistent context in ``profile_dir``)."""
    sync_api = require_browser()
    with sync_api.sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(profile_dir), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": width, "height": height})
        try:
            page = ctx.pages[0] if ctx.pages else ctx.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.errors = errors  # type: ignore[attr-defined]
            yield page
        finally:
            ctx.close()


def screenshot(page: Any, name: str, **kwargs: Any) -> None:
    """Write ``docs/ui/<name>.png`` when :data:`SCREENSHOTS_ENV` is set."""
    if os.environ.get(SCREENSHOTS_ENV):
        DOCS_UI.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS_UI / f"{name}.png"), **kwargs)

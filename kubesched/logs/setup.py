"""Root-logger setup for ``kubesched run`` and ``serve``: klog text (default) or JSON lines.

Text follows klog's header (``Lmmdd hh:mm:ss.uuuuuu pid file:line] "msg" k="v"``,
``k8s.io/klog/v2: formatHeader`` and ``internal/serialize: KVListFormat``); JSON follows
``k8s.io/component-base/logs/json`` (``{"ts": seconds, "caller": "file:line", "msg", "v", ...kv}``,
errors under ``"err"``). Rendering is structlog's: its ``ProcessorFormatter`` renders stdlib records
(every module logs through ``logging``), with a klog renderer for text and structlog's JSON renderer.
"""

from __future__ import annotations

import logging
import os
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

import structlog
from structlog.types import EventDict

from kubesched.logs.kv import KObj, v_level

__all__ = ["FORMATS", "configure"]

FORMATS = ("text", "json")
_SEVERITY = {
    logging.DEBUG: "I",
    logging.INFO: "I",
    logging.WARNING: "W",
    logging.ERROR: "E",
    logging.CRITICAL: "F",
}


def _record_fields(logger: Any, name: str, event: EventDict) -> EventDict:
    """Move what the stdlib record carries (time, caller, thread, verbosity, key/values) into the event."""
    record: logging.LogRecord | None = event.get("_record")
    if record is None:
        return event
    event["_ts"] = record.created
    event["_caller"] = f"{record.filename}:{record.lineno}"
    event["_pid"] = record.process or os.getpid()
    event["_severity"] = _SEVERITY.get(record.levelno, "I" if record.levelno < logging.WARNING else "E")
    event["_v"] = getattr(
        record, "v", max(0, logging.INFO - record.levelno) if record.levelno <= logging.INFO else 0
    )
    for k, v in (getattr(record, "kv", None) or {}).items():
        event[k] = v
    exc_info = event.pop("exc_info", None) or record.exc_info
    event.pop("positional_args", None)
    if isinstance(exc_info, tuple) and exc_info[1] is not None:
        event["err"] = str(exc_info[1])
    return event


def _quote(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    text = str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _klog_text(logger: Any, name: str, event: EventDict) -> str:
    ts = datetime.fromtimestamp(event.pop("_ts", 0.0), UTC)
    header = (
        f"{event.pop('_severity', 'I')}{ts:%m%d %H:%M:%S.%f} {event.pop('_pid', 0):7d} "
        f"{event.pop('_caller', '?')}]"
    )
    event.pop("_v", None)
    msg = event.pop("event", "")
    pairs = " ".join(f"{k}={_quote(v)}" for k, v in event.items() if not k.startswith("_"))
    return f"{header} {_quote(msg)}" + (f" {pairs}" if pairs else "")


def _json_fields(logger: Any, name: str, event: EventDict) -> EventDict:
    out: EventDict = {
        "ts": round(event.pop("_ts", 0.0), 6),
        "caller": event.pop("_caller", "?"),
        "msg": event.pop("event", ""),
    }
    if event.pop("_severity", "I") in ("E", "F"):
        out["err"] = event.pop("err", out["msg"])
    else:
        out["v"] = event.pop("_v", 0)
    event.pop("_pid", None)
    for k, v in event.items():
        if not k.startswith("_"):
            out[k] = v.to_json() if isinstance(v, KObj) else v
    return out


def configure(verbosity: int = 0, fmt: str = "text", stream: TextIO | None = None) -> None:
    """Route every ``logging`` record of level ``v_level(verbosity)`` and up to ``stream``
    (stderr) in ``fmt`` (``text`` or ``json``); quiets the HTTP client libraries below ``-v=6``.
    Raises ``ValueError`` for an unknown format."""
    if fmt not in FORMATS:
        raise ValueError(f'unsupported logging format "{fmt}": supported are "text", "json"')
    if fmt == "json":
        processors: list[Any] = [_json_fields, structlog.processors.JSONRenderer(default=str)]
    else:
        processors = [_klog_text]
    formatter = structlog.stdlib.ProcessorFormatter(
        processors=[_record_fields, structlog.stdlib.ProcessorFormatter.remove_processors_meta, *processors],
        pass_foreign_args=False,
        keep_exc_info=False,
    )
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(v_level(verbosity))
    quiet = logging.WARNING if verbosity < 6 else logging.NOTSET
    for noisy in ("urllib3", "kubernetes", "httpx", "httpcore", "aiohttp.access"):
        logging.getLogger(noisy).setLevel(quiet)

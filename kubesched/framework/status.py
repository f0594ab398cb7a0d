"""``Code`` and ``Status`` (``staging/src/k8s.io/kube-scheduler/framework/interface.go``).

A ``None`` status means Success, as a nil ``*Status`` does upstream.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum


class Code(IntEnum):
    """Status codes in upstream order; ``str(code)`` gives the exact upstream name."""

    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5
    Pending = 6

    def __str__(self) -> str:
        return self.name


_REJECTED = (Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending)


class Status:
    """The result of running a plugin: a code, human-readable reasons, an optional
    wrapped error and the name of the plugin that produced it (set by the framework)."""

    __slots__ = ("code", "reasons", "err", "plugin")

    def __init__(
        self, code: Code = Code.Success, *reasons: str, err: BaseException | None = None, plugin: str = ""
    ) -> None:
        self.code = code
        self.reasons: list[str] = list(reasons)
        self.err = err
        self.plugin = plugin

    @classmethod
    def from_reasons(cls, code: Code, reasons: Sequence[str], plugin: str = "") -> Status:
        """A status with a list of reasons."""
        return cls(code, *reasons, plugin=plugin)

    @classmethod
    def as_status(cls, err: BaseException | None) -> Status | None:
        """``AsStatus``: an Error status wrapping ``err`` (``None`` for ``None``)."""
        if err is None:
            return None
        return cls(Code.Error, err=err)

    def with_plugin(self, plugin: str) -> Status:
        """Set the failing plugin's name and return self."""
        self.plugin = plugin
        return self

    def message(self) -> str:
        """Reasons joined by ``", "``; a wrapped error's text comes first."""
        reasons = self.reasons
        if self.err is not None:
            reasons = [str(self.err), *reasons]
        return ", ".join(reasons)

    def is_success(self) -> bool:
        """Code is Success."""
        return self.code == Code.Success

    def is_wait(self) -> bool:
        """Code is Wait."""
        return self.code == Code.Wait

    def is_skip(self) -> bool:
        """Code is Skip."""
        return self.code == Code.Skip

    def is_rejected(self) -> bool:
        """Code is Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in _REJECTED

    def as_error(self) -> Exception | None:
        """``AsError``: ``None`` for Success/Wait/Skip, else the wrapped error or a new one with ``message()``."""
        if self.code in (Code.Success, Code.Wait, Code.Skip):
            return None
        if isinstance(self.err, Exception):
            return self.err
        return FrameworkError(self.message())

    def to_dict(self) -> dict[str, object]:
        """JSON form used in results: ``{"code": "Unschedulable", "reasons": [...]}``."""
        return {
            "code": str(self.code),
            "reasons": [str(self.err), *self.reasons] if self.err else list(self.reasons),
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return self.code == other.code and self.reasons == other.reasons and self.message() == other.message()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        p = f", plugin={self.plugin!r}" if self.plugin else ""
        return f"Status({self.code!s}, {self.message()!r}{p})"


class FrameworkError(Exception):
    """An internal scheduling error carried by an Error status."""


def code_of(s: Status | None) -> Code:
    """The code of a possibly-``None`` status (``None`` is Success)."""
    return Code.Success if s is None else s.code


def is_success(s: Status | None) -> bool:
    """True for ``None`` or a Success status."""
    return s is None or s.code == Code.Success


def is_rejected(s: Status | None) -> bool:
    """True for a non-``None`` rejected status."""
    return s is not None and s.code in _REJECTED

"""PodTopologySpread args (``PodTopologySpreadArgs`` of
``pkg/scheduler/apis/config/v1/types_pluginargs.go``, validation from
``pkg/scheduler/apis/config/validation/validation_pluginargs.go`` ``ValidatePodTopologySpreadArgs``).
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Final

from pydantic import ValidationInfo, field_validator, model_validator
from pydantic.dataclasses import dataclass

from kubesched.api.pod import TopologySpreadConstraint
from kubesched.config.args import ARGS_CONFIG
from kubesched.config.resource_names import is_qualified_name
from kubesched.plugins.podtopologyspread.common import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY

SYSTEM_DEFAULTING: Final = "System"
LIST_DEFAULTING: Final = "List"

# --- args ------------------------------------------------------------------------------------


def _with_defaults(data: Any, defaults: dict[str, Any]) -> Any:
    """Add the unset camelCase keys of a decoded mapping so their validators run."""
    if isinstance(data, dict):
        snake = {
            "maxSkew": "max_skew",
            "topologyKey": "topology_key",
            "whenUnsatisfiable": "when_unsatisfiable",
            "defaultingType": "defaulting_type",
        }
        for k, v in defaults.items():
            if k not in data and snake[k] not in data:
                data = {**data, k: v}
    return data


@dataclass(config=ARGS_CONFIG)
class DefaultSpreadConstraint:
    """A ``v1.TopologySpreadConstraint`` in ``defaultConstraints``: ``maxSkew`` > 0, a valid
    ``topologyKey``, ``whenUnsatisfiable`` DoNotSchedule|ScheduleAnyway and no ``labelSelector``
    (the selector is deduced for each pod)."""

    max_skew: int = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    label_selector: dict[str, Any] | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] = field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _validate_unset(cls, data: Any) -> Any:
        """Unset fields are validated too (upstream validates the zero values)."""
        return _with_defaults(data, {"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": ""})

    @field_validator("max_skew")
    @classmethod
    def _max_skew(cls, v: int) -> int:
        if v <= 0:
            raise ValueError(f"Invalid value: {v}: not in valid range (0, inf)")
        return v

    @field_validator("topology_key")
    @classmethod
    def _topology_key(cls, v: str) -> str:
        if not v:
            raise ValueError("Required value: can not be empty")
        errs = is_qualified_name(v)
        if errs:
            raise ValueError(f'Invalid value: "{v}": ' + "; ".join(errs))
        return v

    @field_validator("when_unsatisfiable")
    @classmethod
    def _when_unsatisfiable(cls, v: str) -> str:
        if not v:
            raise ValueError("Required value: can not be empty")
        if v not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            raise ValueError(
                f'Unsupported value: "{v}": supported values: "{DO_NOT_SCHEDULE}", "{SCHEDULE_ANYWAY}"'
            )
        return v

    @field_validator("label_selector")
    @classmethod
    def _no_selector(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        if v is not None:
            raise ValueError("Forbidden: constraint must not define a selector, as they deduced for each pod")
        return v

    def to_api(self) -> TopologySpreadConstraint:
        """The constraint as the API view the plugin works on."""
        return TopologySpreadConstraint(
            self.max_skew,
            self.topology_key,
            self.when_unsatisfiable,
            None,
            self.min_domains,
            self.node_affinity_policy,
            self.node_taints_policy,
            tuple(self.match_label_keys),
        )


@dataclass(config=ARGS_CONFIG)
class PodTopologySpreadArgs:
    """``PodTopologySpreadArgs``: ``default_constraints`` (used for pods without constraints when
    ``defaulting_type`` is ``List``; must be empty with ``System``, which uses hostname/3 and
    zone/5 ScheduleAnyway) and ``defaulting_type`` (default ``System``).

    Raises pydantic ``ValidationError`` (reported at the field path) for an invalid constraint,
    a repeated ``{topologyKey, whenUnsatisfiable}`` pair, an unknown defaulting type, or
    constraints given with ``System``."""

    default_constraints: list[DefaultSpreadConstraint] = field(default_factory=list)
    defaulting_type: str = SYSTEM_DEFAULTING

    @model_validator(mode="before")
    @classmethod
    def _validate_unset(cls, data: Any) -> Any:
        """The defaulted ``defaultingType`` is validated against the constraints too."""
        return _with_defaults(data, {"defaultingType": SYSTEM_DEFAULTING})

    @field_validator("default_constraints")
    @classmethod
    def _not_repeated(cls, v: list[DefaultSpreadConstraint]) -> list[DefaultSpreadConstraint]:
        for i, c in enumerate(v):
            for other in v[:i]:
                if c.topology_key == other.topology_key and c.when_unsatisfiable == other.when_unsatisfiable:
                    raise ValueError(
                        f'[{i}]: Duplicate value: "{{{c.topology_key}, {c.when_unsatisfiable}}}"'
                    )
        return v

    @field_validator("defaulting_type")
    @classmethod
    def _defaulting_type(cls, v: str, info: ValidationInfo) -> str:
        if v not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            raise ValueError(
                f'Unsupported value: "{v}": supported values: "{SYSTEM_DEFAULTING}", "{LIST_DEFAULTING}"'
            )
        if v == SYSTEM_DEFAULTING and info.data.get("default_constraints"):
            raise ValueError(f'Invalid value: "{v}": when .defaultConstraints are not empty')
        return v

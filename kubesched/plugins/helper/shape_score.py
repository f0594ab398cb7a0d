"""Utilization shapes of plugin args: ``UtilizationShapePoint`` and its validation
(``pkg/scheduler/apis/config/types_pluginargs.go`` ``UtilizationShapePoint``;
``pkg/scheduler/apis/config/validation/validation_pluginargs.go`` ``validateFunctionShape``).

Shared by NodeResourcesFit's ``requestedToCapacityRatio.shape`` and VolumeBinding's ``shape``
(StorageCapacityScoring). The broken-linear function built from a shape is
:func:`kubesched.plugins.noderesources.scoring.broken_linear`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from pydantic import field_validator
from pydantic.dataclasses import dataclass

from kubesched.config.args import ARGS_CONFIG

#: ``config.MaxCustomPriorityScore``: the largest ``score`` of a shape point
MAX_CUSTOM_PRIORITY_SCORE: Final = 10
#: ``maxUtilization`` (percent): the largest ``utilization`` of a shape point
MAX_UTILIZATION: Final = 100


@dataclass(config=ARGS_CONFIG)
class UtilizationShapePoint:
    """A shape point: ``utilization`` 0..100 (percent), ``score`` 0..10. Raises ``ValueError``
    ``not in valid range [0, 100]`` / ``not in valid range [0, 10]``."""

    utilization: int = 0
    score: int = 0

    @field_validator("utilization")
    @classmethod
    def _utilization_range(cls, v: int) -> int:
        if not 0 <= v <= MAX_UTILIZATION:
            raise ValueError(f"not in valid range [0, {MAX_UTILIZATION}]")
        return v

    @field_validator("score")
    @classmethod
    def _score_range(cls, v: int) -> int:
        if not 0 <= v <= MAX_CUSTOM_PRIORITY_SCORE:
            raise ValueError(f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]")
        return v


def validate_shape(shape: Sequence[UtilizationShapePoint]) -> None:
    """A shape is non-empty with strictly increasing utilizations. Raises ``ValueError``
    ``at least one point must be specified`` or ``utilization values must be sorted in increasing
    order (shape[i].utilization = u)``."""
    if not shape:
        raise ValueError("at least one point must be specified")
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            raise ValueError(
                f"utilization values must be sorted in increasing order "
                f"(shape[{i}].utilization = {shape[i].utilization})"
            )

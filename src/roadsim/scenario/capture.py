"""Scenario options of the capture (``capture:``): how often it takes a snapshot.

`roadsim.scenario.schema` validates the scenario's ``capture`` with `CaptureSpec`, and
imports this module when it validates, not at its own top (as it does
`roadsim.scenario.sensors`, and for the same reason: modules with compiled kernels import
the schema, and a change here would compile them again for nothing).

A rate is in snapshots per simulated second; `roadsim.capture.Capture` takes every k-th
frame, k = round(1 / (rate * dt)), so the rate it keeps is 1 / (k * dt): 20 Hz at the
default dt of 0.05 s is every tick, 15 Hz is every tick too (the nearest), 5 Hz every
fourth.
"""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from roadsim.scenario.schema import _Strict

__all__ = ["CaptureSpec"]


class CaptureSpec(_Strict):
    """How often the capture takes a snapshot: ``rate`` (Hz) or ``every`` (ticks), not
    both; neither is every tick."""

    rate: float | None = Field(
        default=None, gt=0, description="Snapshots per simulated second (Hz)"
    )
    every: int | None = Field(default=None, ge=1, description="Ticks between two snapshots")

    @model_validator(mode="after")
    def _one_of(self) -> Self:
        if self.rate is not None and self.every is not None:
            raise ValueError("give rate (Hz) or every (ticks), not both")
        return self

"""The capture's errors."""

from __future__ import annotations

from roadsim.errors import RoadsimError

__all__ = ["RecordingError"]


class RecordingError(RoadsimError):
    """A recording that cannot be written or read: a path taken, a file that is no MCAP
    recording, a truncated one. The message names the file and what is wrong."""

"""Checks of model hyperparameters, shared by every family: a bad value is a ValueError that
names the parameter (``float`` and ``int`` alone would take ``True``, ``"1"`` or ``2.7``)."""

from __future__ import annotations

import math
import numbers

import numpy as np


def positive_number(name: str, value) -> float:
    """``value`` as a float if it is a positive finite real number; a ValueError naming
    ``name`` otherwise (also for a bool or a string, which ``float`` would take)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    value = float(value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return value


def whole_number(name: str, value, low: int) -> int:
    """``value`` as an int if it is a whole number >= ``low`` (3 and 3.0, not True, "3" or
    2.5); a ValueError naming ``name`` otherwise."""
    if (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real)
            or not math.isfinite(value) or int(value) != value or value < low):
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def flag(name: str, value) -> bool:
    """``value`` as a bool if it is True, False (numpy's too) or the integer 0 or 1; a
    ValueError naming ``name`` otherwise (``bool("no")`` is True)."""
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, numbers.Integral)
                                               and value in (0, 1)):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {value!r}")

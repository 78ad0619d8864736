"""The gesture-class vocabulary shared by annotation, SGP, the study windows and the sem reader."""

from __future__ import annotations

from typing import Literal, get_args

GestureClass = Literal["iconic", "metaphoric", "deictic", "beat", "none", "uncertain"]
#: Every class an annotation may carry, in this order (SGP's `sgp_class_<class>` extras follow it).
GESTURE_CLASSES: tuple[str, ...] = get_args(GestureClass)
#: The classes that carry meaning: a reference event of one of these is a valid semantic event for
#: SGP, and the study's windows are chosen by their count.
SEMANTIC_CLASSES: tuple[str, ...] = GESTURE_CLASSES[:3]

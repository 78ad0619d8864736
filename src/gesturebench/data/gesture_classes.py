"""The gesture-class vocabulary shared by annotation, SGP, the study windows and the sem reader, and
the class a BEAT `sem` name encodes (`sem_label`).

A `sem` name is BEAT's gesture-type code (the BEAT authors, PantoMatrix issue #53): 0 no gesture,
1 beat, 2–4 deictic, 5–7 iconic, 8–10 metaphoric, the suffix ``_l``/``_m``/``_h`` being the
annotated quality (low/middle/high). `sem_label` maps a name to the class vocabulary by its first
word after the numeric prefix:

    beat_align → "beat", deictic_* → "deictic", iconic_* → "iconic", metaphoric_* → "metaphoric",
    nogesture → "none", anything else (habit, need_cut, unknown names) → None.

A bare class name (``iconic``) maps to itself, so mini-BEAT2 can write plain names.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

GestureClass = Literal["iconic", "metaphoric", "deictic", "beat", "none", "uncertain"]
#: Every class an annotation may carry, in this order (SGP's `sgp_class_<class>` extras follow it).
GESTURE_CLASSES: tuple[str, ...] = get_args(GestureClass)
#: The classes that carry meaning: a reference event of one of these is a valid semantic event for
#: SGP, and the study's windows are chosen by their count.
SEMANTIC_CLASSES: tuple[str, ...] = GESTURE_CLASSES[:3]
#: First word of a `sem` name → class: a class name itself (BEAT has no "uncertain"), or nogesture.
SEM_CLASSES = {**{c: c for c in GESTURE_CLASSES if c != "uncertain"}, "nogesture": "none"}
_CODE_PREFIX = re.compile(r"^\d+_")


def sem_label(name: str) -> str | None:
    """The gesture class of a BEAT `sem` name (see the module docstring), or None when it names no
    class."""
    word = _CODE_PREFIX.sub("", name.strip().lower()).split("_")[0]
    return SEM_CLASSES.get(word)

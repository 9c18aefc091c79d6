"""
Keyword options declared once, as a TypedDict, and taken as ``**options: Unpack[...]`` by every
function that accepts or passes them on: type checkers see each name and type, and at run time
an unknown name is refused as a wrong keyword argument would be.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def check_options(function: str, given: Mapping[str, Any], known: frozenset[str], required: frozenset[str] = frozenset()) -> None:
    """Raises TypeError naming the options of ``given`` that ``known`` does not hold, or the ``required`` it lacks."""
    unknown = given.keys() - known
    if unknown:
        raise TypeError(f"{function}() got unexpected keyword argument(s): {', '.join(sorted(unknown))}")
    missing = required - given.keys()
    if missing:
        raise TypeError(f"{function}() is missing keyword argument(s): {', '.join(sorted(missing))}")

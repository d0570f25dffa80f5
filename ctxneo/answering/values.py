"""What a value looks like: a date, a duration, an amount, a person's name.

The answer a question asks for has a shape ("when" -> a date, "how long" -> a
duration, "who" -> a person); a value of the wrong shape is a weaker answer.
"""

from __future__ import annotations

import re

from ctxneo.text import is_identifier

_MONTHS = (
    "jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june "
    "july august september october november december monday tuesday wednesday thursday "
    "friday saturday sunday mon tue wed thu fri sat sun today tomorrow yesterday tonight "
    "noon midnight eod weekend week"
).split()
_UNITS = (
    "ms millisecond second sec minute min hour hr day week month year quarter night shift sprint"
).split()
_SHAPES = {
    "date": re.compile(
        r"\b(" + "|".join(_MONTHS) + r")\b|\b\d{1,2}[:/.]\d{2}\b|\b\d{4}-\d{2}"
        r"|\b\d{1,2}\s*(am|pm)\b|\bq[1-4]\b|\b(19|20)\d{2}\b|\b\d{1,2}:\d{2}(?!\d)",
        re.IGNORECASE,
    ),
    "duration": re.compile(r"\b\d+(\.\d+)?\s*(" + "|".join(_UNITS) + r")s?\b", re.IGNORECASE),
    "amount": re.compile(
        r"[$€£¥]\s*\d|\b\d+(\.\d+)?\s*(k|m|bn|million|billion|thousand|usd|eur|"
        r"gbp|dollars?|euros?|pounds?|percent|%)",
        re.IGNORECASE,
    ),
}


def has_shape(value: str, shape: str) -> bool:
    """Whether a value looks like the kind of answer a question asks for (a date, a duration...)."""
    return bool(_SHAPES[shape].search(value))


def only_a_measure(value: str) -> bool:
    """Whether a value is nothing but a date, a time, a duration or an amount ("10 March",
    "07:15", "45 seconds", "June 2028"): what is left once those are taken out has no word.
    ("Room 3.14" is a room with a number in it, not a time.)"""
    rest = value
    for shape in _SHAPES.values():
        rest = shape.sub(" ", rest)
    return not re.search(r"[^\W\d_]{2,}", rest) and rest != value


def person_like(name: str) -> bool:
    """Whether a name could answer "who": a handle or a short proper name, not a phrase,
    a quantity or a code ("15 minutes", "late delivery", "S14", "INV-2")."""
    if is_identifier(name):
        return not re.search(r"\d", name)
    words = name.split()
    if len(words) == 1:
        return bool(re.fullmatch(r"[^\W\d_][\w.-]*", name))
    return (
        0 < len(words) <= 3 and all(w[:1].isupper() for w in words) and not re.search(r"\d", name)
    )

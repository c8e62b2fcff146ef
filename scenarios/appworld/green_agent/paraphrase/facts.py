"""The facts a piece of task text states, read deterministically (no model).

`read_text(text)` finds, in this order (each found span is blanked before the next kind is read, so a number
inside a quoted string or a path is not read again as a number):
- literals: quoted strings ('...', "...", curly quotes; an apostrophe between letters, as in "Kira's", is not a
  quote), file paths (`~/documents/x`), e-mail addresses: compared verbatim (case and all);
- times: `07:30`, `7:30 pm` -> `07:30` / `19:30`;
- months (full names and abbreviations, `Mar`, `Sept.`; `May` only when a number is beside it or it is
  capitalised mid-sentence) -> `month:5`; weekdays (`Mon`, `Monday`) -> `weekday:monday`;
  ISO dates `2023-05-21` are read as their parts: month 5, and the numbers 2023 and 21;
- numbers written in digits, compared by value (`$30` == `30` == `30.00`, `1,000` == `1000`); a `$` before or
  `dollars` after makes it an amount (for the wording of reasons only). Number words (`two`) are not read;
- name runs: runs of capitalised words outside the spans above (`Farid Haddad`, `Simple Note`), with a
  sentence-opening function word (`In Gmail` -> `Gmail`) trimmed, and a single capitalised word that opens a
  sentence not read as a name (it cannot be told from an ordinary word there).
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation
from typing import Literal

from pydantic import BaseModel, Field

FactKind = Literal["number", "amount", "month", "weekday", "time", "literal", "name"]

MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
    "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9,
    "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}
WEEKDAYS = {
    "monday": "monday", "mon": "monday", "tuesday": "tuesday", "tue": "tuesday", "tues": "tuesday",
    "wednesday": "wednesday", "wed": "wednesday", "thursday": "thursday", "thu": "thursday", "thurs": "thursday",
    "friday": "friday", "fri": "friday", "saturday": "saturday", "sat": "saturday", "sunday": "sunday",
    "sun": "sunday",
}
OPENING_WORDS = frozenset("""
a about add after all also an and any approve archive are as at before besides but by can check could create
delete did do does each every find first for from get give hello hey hi how i i'd i'll i'm i've if in is
it it's its just label leave let look make move my no not now of off ok okay on once or our pay please put
quick quickly reply send set so some sorry tell text thanks that the then there these this those to turn up
we what when where which who why will with would yes you your
""".split())
"""Words that may open a sentence capitalised without being a name (trimmed from a run's start)."""

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_LITERAL = re.compile(
    r"""(?<![\w'])'(?P<single>[^'\n]*?(?:'(?=\w)[^'\n]*?)*)'(?!\w)"""  # 'RSVP: Kira's shower': inner ' before a letter
    r'''|"(?P<double>[^"\n]+)"'''
    r"|(?P<path>~?/[\w.\-/]*[\w\-/])"
    r"|(?P<email>[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+)"
)
_TIME = re.compile(r"(?<![\w:])(\d{1,2}):(\d{2})(?:\s*([ap])\.?m\.?)?(?![\w:])", re.IGNORECASE)
_ISO_DATE = re.compile(r"(?<![\w\-])(\d{4})-(\d{2})-(\d{2})(?![\w\-])")
_MONTH = re.compile(r"\b(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b", re.IGNORECASE)
_WEEKDAY = re.compile(r"\b(" + "|".join(sorted(WEEKDAYS, key=len, reverse=True)) + r")\b", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])(\$\s*)?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:st|nd|rd|th)?(\s*dollars?\b)?",
                     re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][A-Za-z\-]*(?:'[A-Za-z]+)?")
_PRONOUN_I = frozenset({"i", "i'm", "i've", "i'd", "i'll"})
_SENTENCE_END = re.compile(r"[.!?:;]\s*$|^\s*$")


class Fact(BaseModel):
    """One fact of a text."""

    kind: FactKind = Field(description="What sort of fact (numbers and amounts compare with each other).")
    value: str = Field(description="The normalised value compared (`30`, `month:3`, `07:30`, a literal verbatim).")
    text: str = Field(description="How the text wrote it (for reasons).")


class TextFacts(BaseModel):
    """Everything `read_text` found in one text."""

    facts: list[Fact] = Field(default_factory=list, description="Literals, times, months, weekdays, numbers.")
    names: list[Fact] = Field(default_factory=list, description="Capitalised name runs (see the module docstring).")


def normalise(text: str) -> str:
    """NFKC, straight quotes, single spaces (the form every check reads)."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).translate(_QUOTES)).strip()


def number_value(digits: str, fraction: str | None) -> str:
    """`1,000` + `.50` -> `1000.5`: the value as a plain decimal string."""
    try:
        value = Decimal(digits.replace(",", "") + (fraction or "")).normalize()
    except InvalidOperation:
        return digits
    return format(value, "f")


def read_text(text: str) -> TextFacts:
    """The facts of `text` (module docstring)."""
    chars = list(normalise(text))
    facts: list[Fact] = []
    for reader in (_read_literals, _read_times, _read_dates, _read_numbers):
        facts += reader(chars)
    return TextFacts(facts=facts, names=_read_names("".join(chars)))


def _blank(chars: list[str], match: re.Match[str]) -> None:
    chars[match.start():match.end()] = " " * (match.end() - match.start())


def _read_literals(chars: list[str]) -> list[Fact]:
    found = []
    for match in _LITERAL.finditer("".join(chars)):
        value = next(group for group in match.groups() if group is not None)
        if value.strip():
            found.append(Fact(kind="literal", value=value, text=match.group(0)))
        _blank(chars, match)
    return found


def _read_times(chars: list[str]) -> list[Fact]:
    found = []
    for match in _TIME.finditer("".join(chars)):
        hour, minute, half = int(match.group(1)), match.group(2), (match.group(3) or "").lower()
        hour = hour % 12 + (12 if half == "p" else 0) if half else hour
        found.append(Fact(kind="time", value=f"{hour:02d}:{minute}", text=match.group(0)))
        _blank(chars, match)
    return found


def _read_dates(chars: list[str]) -> list[Fact]:
    found = []
    for match in _ISO_DATE.finditer("".join(chars)):
        year, month, day = match.groups()
        found += [Fact(kind="month", value=f"month:{int(month)}", text=match.group(0)),
                  Fact(kind="number", value=str(int(year)), text=match.group(0)),
                  Fact(kind="number", value=str(int(day)), text=match.group(0))]
        _blank(chars, match)
    text = "".join(chars)
    for match in _MONTH.finditer(text):
        if _is_month(text, match):
            found.append(Fact(kind="month", value=f"month:{MONTHS[match.group(1).lower()]}", text=match.group(0)))
            _blank(chars, match)
    for match in _WEEKDAY.finditer("".join(chars)):
        word = match.group(1)
        if len(word) > 3 or word[0].isupper():  # "sat", "wed", "sun" lower-case are ordinary words
            found.append(Fact(kind="weekday", value=f"weekday:{WEEKDAYS[word.lower()]}", text=match.group(0)))
            _blank(chars, match)
    return found


def _is_month(text: str, match: re.Match[str]) -> bool:
    """A month name is a month unless it is an ordinary word: `may` (the verb), a short lower-case `mar`."""
    word = match.group(1)
    beside_number = bool(re.match(r"\s*\d", text[match.end():]) or re.search(r"\d(?:st|nd|rd|th)?\s*(?:of\s+)?$",
                                                                              text[:match.start()]))
    if word.lower() == "may":
        return beside_number or (word == "May" and not _SENTENCE_END.search(text[:match.start()]))
    return len(word) > 3 or beside_number or word[0].isupper()


def _read_numbers(chars: list[str]) -> list[Fact]:
    found = []
    for match in _NUMBER.finditer("".join(chars)):
        dollar, digits, fraction, dollars = match.groups()
        kind = "amount" if dollar or dollars else "number"
        found.append(Fact(kind=kind, value=number_value(digits, fraction), text=match.group(0).strip()))
        _blank(chars, match)
    return found


def _read_names(text: str) -> list[Fact]:
    """Runs of capitalised words (module docstring), each with the text before it."""
    runs: list[list[re.Match[str]]] = []
    for match in _WORD.finditer(text):
        capitalised = match.group(0)[0].isupper() and match.group(0).lower() not in _PRONOUN_I
        joined = runs and runs[-1] and re.fullmatch(r" ?(?:&\s)?", text[runs[-1][-1].end():match.start()])
        if capitalised and joined:
            runs[-1].append(match)
        elif capitalised:
            runs.append([match])
        elif runs and runs[-1]:
            runs.append([])
    names = []
    for run in filter(None, runs):
        opens_sentence = bool(_SENTENCE_END.search(text[:run[0].start()]))
        if opens_sentence and run[0].group(0).lower() in OPENING_WORDS:
            run = run[1:]
            opens_sentence = False
        if not run or (opens_sentence and len(run) == 1):
            continue
        words = " ".join(_strip_possessive(m.group(0)) for m in run)
        names.append(Fact(kind="name", value=words.lower(), text=words))
    return names


def _strip_possessive(word: str) -> str:
    return word[:-2] if word.endswith("'s") else word

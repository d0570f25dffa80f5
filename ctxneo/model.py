"""The plain data ctxneo passes around: facts, turns, scenarios and answers."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sized
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache

from ctxneo.errors import InvalidFactError

#: A predicate is stored as a Neo4j relationship type, so it must be a plain
#: identifier; anything else is refused instead of being pasted into Cypher.
PREDICATE_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,99}")

#: Neo4j 5 refuses an index key over about 8 KB (8,161 bytes measured for the
#: (namespace, name) uniqueness constraint on 5.26). Capping names at 4 KB and
#: namespaces at 1 KB of UTF-8 keeps every pair well inside it, so a memory
#: valid in process always exports to any valid namespace.
MAX_NAME_BYTES = 4_096
MAX_NAMESPACE_BYTES = 1_024
#: What an agent said when stating a fact: kept whole up to this size.
MAX_TEXT_BYTES = 8_192
#: The longest question :meth:`ctxneo.Memory.ask` reads: a question, not a document
#: (the answerer's work grows with the words; 50,000 of them took seconds).
MAX_QUESTION_CHARS = 2_000
#: Neo4j integers are signed 64-bit.
MIN_INT = -(2**63)
MAX_INT = 2**63 - 1
#: The last sequence number a memory hands out (Neo4j's integers are signed 64-bit).
MAX_SEQ = MAX_INT

# A lower-to-upper or acronym-to-word boundary: where camelCase gets an underscore.
_CASE_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@lru_cache(maxsize=4096)
def _normal_predicate(predicate: str) -> str | None:
    if not PREDICATE_PATTERN.fullmatch(predicate):
        return None
    if predicate.isupper() or not any(c.islower() for c in predicate):
        return predicate  # already upper case (digits and underscores are not split)
    normal = _CASE_BOUNDARY.sub("_", predicate).upper()
    return normal if PREDICATE_PATTERN.fullmatch(normal) else None


def valid_predicate(predicate: object) -> bool:
    """Whether ``predicate`` is a relationship type name as stored (any case)."""
    return isinstance(predicate, str) and PREDICATE_PATTERN.fullmatch(predicate) is not None


def check_predicate(predicate: str) -> str:
    """Return ``predicate`` in its one stored form: upper case, words joined by ``_``.

    ``depends_on``, ``dependsOn`` and ``DEPENDS_ON`` are one predicate, so a
    memory never holds two spellings of it side by side.

    Raises:
        InvalidFactError: it is not a string, is empty, too long or has
            characters other than ASCII letters, digits and underscores (or
            starts with a non-letter).
    """
    normal = _normal_predicate(predicate) if isinstance(predicate, str) else None
    if normal is None:
        shown = _shown(predicate)
        # (accents dropped, not the letters they sit on: "ÖWNED" is OWNED, not WNED)
        plain = unicodedata.normalize("NFKD", str(predicate)).encode("ascii", "ignore").decode()
        suggestion = re.sub(r"[^A-Za-z0-9]+", "_", plain).strip("_").upper()
        hint = f" (did you mean {suggestion!r}?)" if PREDICATE_PATTERN.fullmatch(suggestion) else ""
        raise InvalidFactError(
            f"invalid predicate {shown}: use letters, digits and underscores, "
            f"starting with a letter, at most 100 characters{hint}"
        )
    return normal


# Escapes for the characters that are not printable (Unicode's "Other" and "Separator"
# but the space: C0, DEL and C1 controls, line and paragraph separators, text-direction
# overrides, zero-width and other format characters). A line break in a stored name
# would forge a line of output (in an LLM's context, a fact line said by someone else),
# ESC or CSI could rewrite a terminal, and a direction override show a name reversed.
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def one_line(text: str) -> str:
    """``text`` with every character that is not printable shown as an escape (``\\n``,
    ``\\x1b``, ``\\u202e``)."""
    if text.isprintable():
        return text  # (the common case: nothing to escape)
    return "".join(
        c if c.isprintable() or _joins(text, i) else _escape(c) for i, c in enumerate(text)
    )


#: Zero-width joiner and non-joiner: beside an emoji or between letters of the scripts
#: that join (Arabic to Sinhala) they are part of how the text is written (an emoji
#: sequence, a Persian word), not hidden text; elsewhere ("Ω\u200dΩ") they would make
#: two names look alike.
_JOINERS = frozenset("\u200c\u200d")


def _joins(text: str, i: int) -> bool:
    if text[i] not in _JOINERS or not 0 < i < len(text) - 1:
        return False
    before, after = text[i - 1], text[i + 1]
    if not (before.isprintable() and after.isprintable()):
        return False
    emoji = any(unicodedata.category(c) == "So" for c in (before, after))
    joining = all("\u0600" <= c <= "\u0dff" for c in (before, after))
    return emoji or joining


def _escape(char: str) -> str:
    code = ord(char)
    if char in _ESCAPES:
        return _ESCAPES[char]
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


#: What a name may not hold and still be shown bare in a fact's line: the marks the line
#: itself uses for who said it and until when ("[Agent_A, turn 9] (until #3)"), quotes,
#: a backslash, or space at either end.
_NOT_BARE = re.compile(r'[\[\]()"\\]|^\s|\s$')
#: A word written as predicates often are (OWNED_BY, ownedBy, owned_by; not iPhone or
#: macOS), before a space or punctuation: in a name of several words it could be read as
#: the line's relation ("Svc_A OWNED_BY Team_B" as a subject reads as a fact of its own).
_PREDICATE_WORD = re.compile(
    r"(?:^|\s)(?:[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*|[a-z]{2,}[A-Z][a-z][A-Za-z0-9]*)(?=[\s:,;.]|$)"
)


def shown_name(name: str, *, speaker: bool = False) -> str:
    """``name`` as a fact's line shows it: bare, or, when it holds what the line's own
    marks are made of, a character that is not printable, or (among other words) a word
    written as a predicate, in double quotes with its quotes and backslashes escaped by
    a backslash and the rest as :func:`one_line` shows it (so that no name reads as
    another fact, another speaker, a closed fact or a second line, and a name holding a
    line break reads otherwise than one holding a backslash and an n). A speaker is
    quoted when it holds a comma too ("Agent_A, turn 99" would read as a turn).

    A name of plain words is shown bare ("north loading dock"): what it says is left to
    its reader.
    """
    if (
        (name.isprintable() or one_line(name) == name)
        and _NOT_BARE.search(name) is None
        and not (speaker and "," in name)
        and not (" " in name.strip() and _PREDICATE_WORD.search(name) is not None)
    ):
        return name
    return '"' + one_line(name.replace("\\", "\\\\").replace('"', '\\"')) + '"'


def _shown(value: object, limit: int = 60) -> str:
    """``value`` for an error message: its repr, cut short (a name may be megabytes)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    # (the value's own length: its repr adds quotes and escapes)
    size = len(value) if isinstance(value, str) else len(text)
    return f"{text[:limit]}... ({size} characters)"


def check_text(
    value: object, what: str, max_bytes: int = MAX_NAME_BYTES, *, secret: bool = False
) -> str:
    """Return ``value`` if it is a string both stores keep exactly as given; a
    ``secret`` (a password) is named in the error, never shown.

    Raises:
        InvalidFactError: it is not a ``str``, holds a lone surrogate (text
            that is not Unicode, e.g. a non-UTF-8 byte from a command line)
            or is longer than ``max_bytes`` in UTF-8.
    """
    if not isinstance(value, str):
        raise InvalidFactError(f"{what} must be a string, got {type(value).__name__}")
    if len(value) <= max_bytes and value.isascii():
        return value  # (the common case, checked without encoding: ASCII is a byte a char)
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as e:
        shown = "" if secret else f": {_shown(value)}"
        raise InvalidFactError(
            f"{what} is not valid Unicode (a lone surrogate at character {e.start}, as from "
            f"a byte that is not UTF-8){shown}"
        ) from None
    if size > max_bytes:
        raise InvalidFactError(
            f"{what} is {size:,} bytes in UTF-8; at most {max_bytes:,} fit Neo4j's index"
        )
    return value


def check_name(value: object, what: str, max_bytes: int = MAX_NAME_BYTES) -> str:
    """Return ``value`` if it can name an entity: a non-blank string that fits Neo4j's index.

    Raises:
        InvalidFactError: see :func:`check_text`; or it is empty or blank.
    """
    check_text(value, what, max_bytes)
    assert isinstance(value, str)
    if not value or (value[0].isspace() and not value.strip()):
        raise InvalidFactError(f"{what} must be a non-empty string, got {value!r}")
    return value


def check_int(value: object, what: str, *, minimum: int = MIN_INT) -> int:
    """Return ``value`` if it is an integer (not a bool) Neo4j can store (signed 64-bit)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidFactError(f"{what} must be an integer, got {_shown(value)}")
    if not minimum <= value <= MAX_INT:
        raise InvalidFactError(f"{what} must be between {minimum} and {MAX_INT}, got {value}")
    return value


def check_namespace(value: object) -> str:
    """Return ``value`` if it can name a Neo4j namespace (at most 1 KB of UTF-8)."""
    return check_name(value, "namespace", MAX_NAMESPACE_BYTES)


@dataclass(frozen=True, slots=True)
class Fact:
    """One stated (subject, predicate, object) fact and where it came from.

    ``seq`` increases with every write to a memory; ``valid_from`` is the
    sequence number that made the fact current and ``valid_to`` the one that
    closed it (``None`` while it is current).
    """

    subject: str
    predicate: str
    object: str
    seq: int
    valid_from: int
    valid_to: int | None = None
    speaker: str | None = None
    turn_id: int | None = None
    fact_id: str | None = None
    #: The words the fact was stated in, when the writer gave them (see :class:`NewFact`).
    text: str | None = None

    def __hash__(self) -> int:
        # A fact's number names it: equal facts have equal numbers, and hashing the
        # number alone spares hashing ten fields (answers put facts in dicts and sets
        # hundreds of thousands of times a question).
        return hash(self.seq)

    @property
    def current(self) -> bool:
        return self.valid_to is None

    def closed_at(self, at: int) -> Fact:
        """This fact as it stands once closed at sequence number ``at``."""
        # Built directly: dataclasses.replace costs twice as much, and a journal's
        # replay closes most of its facts.
        return make_fact(
            self.subject,
            self.predicate,
            self.object,
            self.seq,
            self.valid_from,
            at,
            self.speaker,
            self.turn_id,
            self.fact_id,
            self.text,
        )

    def valid_at(self, as_of: int | None) -> bool:
        """Whether the fact held at sequence number ``as_of`` (``None``: now)."""
        if as_of is None:
            return self.valid_to is None
        return self.valid_from <= as_of and (self.valid_to is None or self.valid_to > as_of)

    def to_dict(self) -> dict[str, object]:
        return {
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
            "seq": self.seq,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "speaker": self.speaker,
            "turn_id": self.turn_id,
            "fact_id": self.fact_id,
            "text": self.text,
        }

    def line(self) -> str:
        """The compact one-line form used in answer contexts and listings: one line,
        whose marks no name can forge (:func:`shown_name`)."""
        speaker = None if self.speaker is None else shown_name(self.speaker, speaker=True)
        said = ", ".join(
            x for x in (speaker, None if self.turn_id is None else f"turn {self.turn_id}") if x
        )
        closed = "" if self.valid_to is None else f" (until #{self.valid_to})"
        return (
            f"{shown_name(self.subject)} {self.predicate} {shown_name(self.object)}"
            + (f" [{said}]" if said else "")
            + closed
        )


# The slots of Fact, each set by its own descriptor: a frozen dataclass's __init__ looks
# up and calls object.__setattr__ per field, half of what making a Fact costs.
_FACT_FIELDS = (
    "subject",
    "predicate",
    "object",
    "seq",
    "valid_from",
    "valid_to",
    "speaker",
    "turn_id",
    "fact_id",
    "text",
)
assert tuple(f.name for f in fields(Fact)) == _FACT_FIELDS, "make_fact must set every field"
(
    _set_subject,
    _set_predicate,
    _set_object,
    _set_seq,
    _set_valid_from,
    _set_valid_to,
    _set_speaker,
    _set_turn_id,
    _set_fact_id,
    _set_text,
) = (getattr(Fact, name).__set__ for name in _FACT_FIELDS)
_new_object = object.__new__


def make_fact(
    subject: str,
    predicate: str,
    object: str,
    seq: int,
    valid_from: int,
    valid_to: int | None = None,
    speaker: str | None = None,
    turn_id: int | None = None,
    fact_id: str | None = None,
    text: str | None = None,
) -> Fact:
    """``Fact(...)`` with the same arguments, made in half the time: for the loops that
    make one per fact written or replayed (the frozen dataclass's own ``__init__`` was a
    tenth of a batched ingest). The same object in every respect (tested)."""
    fact: Fact = _new_object(Fact)
    _set_subject(fact, subject)
    _set_predicate(fact, predicate)
    _set_object(fact, object)
    _set_seq(fact, seq)
    _set_valid_from(fact, valid_from)
    _set_valid_to(fact, valid_to)
    _set_speaker(fact, speaker)
    _set_turn_id(fact, turn_id)
    _set_fact_id(fact, fact_id)
    _set_text(fact, text)
    return fact


@dataclass(frozen=True, slots=True)
class NewFact:
    """A fact to be written: what :meth:`Memory.remember_many` takes."""

    subject: str
    predicate: str
    object: str
    speaker: str | None = None
    turn_id: int | None = None
    fact_id: str | None = None
    multi: bool = False
    #: What the agent said when it stated the fact ("Harbor St opens at 11 now"): kept with
    #: the fact, and its words help later questions name the fact's entities the way
    #: people spoke of them ("when does harbor st open?" for ``PAR-14``).
    text: str | None = None

    def checked(self) -> NewFact:
        """This fact, validated once for both stores, with its predicate in stored form.

        Raises:
            InvalidFactError: a field has the wrong type or does not fit Neo4j
                (see :func:`check_name`, :func:`check_predicate`, :func:`check_int`).
        """
        check_name(self.subject, "subject")
        check_name(self.object, "object")
        predicate = check_predicate(self.predicate)
        if self.speaker is not None:
            check_name(self.speaker, "speaker")
        if self.turn_id is not None:
            check_int(self.turn_id, "turn_id")
        if self.fact_id is not None:
            check_text(self.fact_id, "fact_id")
        if not isinstance(self.multi, bool):
            raise InvalidFactError(f"multi must be True or False, got {_shown(self.multi)}")
        if self.text is not None:
            check_text(self.text, "text", MAX_TEXT_BYTES)
        return self if predicate == self.predicate else replace(self, predicate=predicate)


def check_facts(facts: Iterable[object]) -> list[NewFact]:
    """``[f.checked() for f in facts]``, each distinct name and predicate checked once.

    A batch names the same entities, predicates and speakers again and again, and
    checking every field of every fact anew was a fifth of a batched ingest; so is
    checking whole facts once (most facts of a batch pair a name seen with one not
    seen yet). The checks run in the order :meth:`NewFact.checked` runs them, so a
    bad fact is refused with the message it gives; only an exact ``str`` is taken
    as known (a subclass may hash and compare as it likes).

    Raises:
        InvalidFactError: an item is not a :class:`NewFact`, or a fact is invalid
            (the first in order; see :meth:`NewFact.checked`), its message prefixed
            with which fact of the batch it is ("fact 2 of 5: ...") for two or more.
    """
    if not isinstance(facts, Sized):
        facts = list(facts)
    try:
        return _checked_facts(facts)
    except InvalidFactError as e:
        if len(facts) < 2:
            raise
        # (a batch of up to hundreds: which one to fix; found again, as errors are rare)
        at = next((i for i, f in enumerate(facts) if _refused(f)), None)
        if at is None:  # (no fact refused alone: say what the batch was refused for)
            raise
        raise InvalidFactError(f"fact {at + 1} of {len(facts)}: {e}") from e


def _refused(fact: object) -> bool:
    try:
        _checked_facts([fact])
    except InvalidFactError:
        return True
    return False


def _checked_facts(facts: Iterable[object]) -> list[NewFact]:
    names: set[str] = set()  # subjects, objects and speakers (one rule: check_name)
    predicates: dict[str, str] = {}  # as given -> stored form
    out: list[NewFact] = []
    append = out.append
    for f in facts:
        if f.__class__ is not NewFact and not isinstance(f, NewFact):
            raise InvalidFactError(f"not a fact: {f!r}"[:200])
        s, p, o, speaker = f.subject, f.predicate, f.object, f.speaker
        if s.__class__ is not str or s not in names:
            check_name(s, "subject")
            if s.__class__ is str:
                names.add(s)
        if o.__class__ is not str or o not in names:
            check_name(o, "object")
            if o.__class__ is str:
                names.add(o)
        stored = predicates.get(p) if p.__class__ is str else None
        if stored is None:
            stored = check_predicate(p)
            if p.__class__ is str:
                predicates[p] = stored
        if speaker is not None and (speaker.__class__ is not str or speaker not in names):
            check_name(speaker, "speaker")
            if speaker.__class__ is str:
                names.add(speaker)
        # The rest is rarely given, and each is its own: checked whenever given.
        if f.turn_id is not None:
            check_int(f.turn_id, "turn_id")
        if f.fact_id is not None:
            check_text(f.fact_id, "fact_id")
        if f.multi.__class__ is not bool:
            raise InvalidFactError(f"multi must be True or False, got {_shown(f.multi)}")
        if f.text is not None:
            check_text(f.text, "text", MAX_TEXT_BYTES)
        append(f if stored == p else replace(f, predicate=stored))
    return out


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a scenario: a fact, a distractor or a query."""

    turn_id: int
    turn_type: str
    speaker: str
    text: str
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    fact_id: str | None = None
    query_type: str | None = None
    required_fact_ids: tuple[str, ...] = ()
    ground_truth: tuple[str, ...] | None = None
    #: A fact turn that withdraws its (subject, predicate, object) instead of stating it.
    retract: bool = False

    @property
    def graded(self) -> bool:
        return self.turn_type == "query" and self.ground_truth is not None

    def as_fact(self) -> NewFact:
        """The fact a fact turn states, with its speaker, turn, id and the words said."""
        assert self.subject and self.predicate and self.object, "not a fact turn"
        return NewFact(
            self.subject,
            self.predicate,
            self.object,
            self.speaker,
            self.turn_id,
            self.fact_id,
            text=self.text or None,
        )


@dataclass(frozen=True, slots=True)
class Scenario:
    """A scripted multi-agent conversation with graded questions."""

    name: str
    description: str
    turns: tuple[Turn, ...]
    multi_valued_predicates: frozenset[str] = frozenset()
    aliases: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Reading:
    """One way of reading a question and the answer it gives.

    ``confidence`` is the calibrated probability that the answer is right;
    ``reading`` names the path shape (``one-hop``, ``two-hop``, ``sibling``,
    ``history:first``, ``provenance``...).
    """

    answer: str
    values: tuple[str, ...]
    evidence: tuple[Fact, ...]
    confidence: float
    reading: str

    def to_dict(self) -> dict[str, object]:
        return {
            "answer": self.answer,
            "values": list(self.values),
            "confidence": self.confidence,
            "reading": self.reading,
            "evidence": [f.to_dict() for f in self.evidence],
        }


@dataclass(frozen=True, slots=True)
class Answer:
    """What the answerer returns for a question.

    ``answer`` is ``UNKNOWN`` when the memory does not hold an answer the
    answerer is sure enough of, and ``reason`` then says why in one line (no
    entity, no relation, the entity has no such fact, the value was
    retracted, too unsure). ``values`` lists every value (several for a
    multi-valued relation); ``answer`` renders them unambiguously (see
    :func:`render_values`). ``confidence`` is the calibrated probability that
    the answer is right. ``evidence`` is the path of facts used; ``readings``
    are the best readings found, best first (the answer's own first, when
    known); ``candidate`` is the best reading rejected when the answer is
    ``UNKNOWN``, offered to the caller, never as the answer. ``context`` is
    what an LLM would be sent: the question and the readings' evidence, within
    the token budget asked for. ``reading`` says how the question was read.
    """

    question: str
    answer: str
    evidence: tuple[Fact, ...] = ()
    context: str = ""
    reading: str = ""
    values: tuple[str, ...] = field(default=())
    confidence: float = 0.0
    reason: str = ""
    readings: tuple[Reading, ...] = ()
    candidate: Reading | None = None
    context_facts: tuple[Fact, ...] = ()  # the facts ``context`` holds, in its order
    #: The form of the answer when the answerer names it: "value", "list", "count",
    #: "yes/no", "speaker", "earlier" ("" when it does not say).
    form: str = ""

    @property
    def known(self) -> bool:
        """Whether the memory answered: an abstention is ``UNKNOWN`` with no values (a
        value stored as the word "UNKNOWN", a test's result say, is an answer)."""
        return self.answer != UNKNOWN or bool(self.values)

    def line(self) -> str:
        """The answer in one line, with its confidence or the reason it is unknown."""
        if not self.known:
            return f"{UNKNOWN}: {self.reason}" if self.reason else UNKNOWN
        return f"{self.answer}  (confidence {self.confidence:.2f})"

    def to_dict(self) -> dict[str, object]:
        return {
            "question": self.question,
            "answer": self.answer,
            "known": self.known,
            "values": list(self.values),
            "confidence": self.confidence,
            "reason": self.reason,
            "reading": self.reading,
            "form": self.form,
            "evidence": [f.to_dict() for f in self.evidence],
            "readings": [r.to_dict() for r in self.readings],
            "candidate": None if self.candidate is None else self.candidate.to_dict(),
            "context": self.context,
            # (the facts the context holds: fewer than the evidence when max_tokens cut it)
            "context_facts": [f.to_dict() for f in self.context_facts],
        }


@dataclass(frozen=True, slots=True)
class Trace:
    """How a question was read, stage by stage, for diagnosis (never part of an answer):
    the entities linked as anchors, best first, and the candidate readings, best first
    (each with its evidence), before any threshold."""

    question: str
    anchors: tuple[str, ...]
    readings: tuple[Reading, ...]


UNKNOWN = "UNKNOWN"

#: How several values are printed: joined by this, each quoted when it holds it.
VALUE_SEPARATOR = "; "


def render_values(values: tuple[str, ...] | list[str]) -> str:
    """Several values as one unambiguous string.

    Values are joined with ``"; "``; a value that holds a semicolon, a double
    quote or leading/trailing spaces is written as a JSON string, so the list
    can always be read back (names may hold commas: "Gates, Bill").
    """
    import json

    if len(values) == 1:
        return values[0]
    # Most lists quote nothing: no value holds a semicolon (the joined text holds only the
    # separators' own), a double quote, or spaces at its ends. Checked in C, as a hub's
    # lists hold hundreds of values.
    joined = VALUE_SEPARATOR.join(values)
    if (
        joined.count(";") == len(values) - 1
        and '"' not in joined
        and list(map(str.strip, values)) == list(values)
    ):
        return joined
    return VALUE_SEPARATOR.join(
        json.dumps(v, ensure_ascii=False) if (";" in v or '"' in v or v != v.strip()) else v
        for v in values
    )

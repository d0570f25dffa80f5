"""The Neo4j store: the same contract over the official driver.

Facts are relationships typed by their predicate between ``:Entity`` nodes,
so the graph reads naturally in Neo4j Browser::

    (:Entity {ns: "default", name: "AuthModule"})-[:DEPENDS_ON {seq: 4, valid_from: 4,
        valid_to: null, speaker: "Agent_Implementer", turn_id: 9}]->(:Entity {name: "RateLimiter"})

Every statement lives in ``cypher/*.cypher`` (bar ``db.awaitIndexes``). A
write is one transaction that takes the namespace's write lock first. One fact
is one statement (``remember_one``), which applies the supersession rule in
Cypher, run as a transaction of its own (one round trip; its retries are
explicit transactions); a batch reads the current facts of its keys, decides
supersession in Python (the rule both stores share, ``stores.base.supersede``),
then merges entities, closes and creates with UNWIND and advances the counter. Each write
carries a client-generated write id, stored on the facts it creates or closes:
retries are the store's own, stop at a time limit, and after a commit whose
answer was lost look the write up before writing again (``find_write``).
Reads are routed as reads, one round trip per store question, on a session
each thread keeps open; a question's words are linked from a copy of the
namespace's names kept in process (:mod:`ctxneo.stores.names`), so an answer's
first round trip is its neighbourhood. Several memories share a server through namespaces:
every node carries ``ns``, and clearing a memory deletes only its own
namespace. A whole memory is loaded in one transaction (:meth:`Neo4jStore.load`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import logging
import os
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from ctxneo import cypher
from ctxneo.environment import seconds_from_env
from ctxneo.errors import (
    InvalidFactError,
    NamespaceInUse,
    StoreError,
    StoreUnavailable,
    WriteOutcomeUnknown,
)
from ctxneo.model import (
    MAX_SEQ,
    Fact,
    NewFact,
    check_facts,
    check_name,
    check_namespace,
    check_predicate,
    check_text,
)
from ctxneo.neo4j_uri import check_uri, redact
from ctxneo.stores.base import (
    MAX_CANDIDATES,
    MAX_NEIGHBOURS,
    MAX_SAID_PER_ENTITY,
    SAID_POSTING,
    Described,
    DescribedAsk,
    EntityHit,
    MemoryImage,
    PredicateUse,
    Store,
    Vocabulary,
    VocabularyMoved,
    Written,
    check_slot,
    most_used,
    next_seq,
    said_of,
    supersede,
    with_said,
)
from ctxneo.stores.names import NameMirror
from ctxneo.stores.neighbourhood import EntityRead, Neighbourhood, Plan
from ctxneo.text import index_keys, said_stems

_T = TypeVar("_T")


def _backoff() -> Iterator[float]:
    """Waits between retries: 50 ms doubling to 1 s, with jitter so clients spread out."""
    delay = 0.05
    while True:
        yield delay * (0.5 + random.random())
        delay = min(delay * 2, 1.0)


def _wait(delay: float, deadline: float) -> bool:
    """Sleep ``delay`` (cut to the deadline); whether time is left for another try."""
    left = deadline - time.monotonic()
    if left <= 0:
        return False
    time.sleep(min(delay, left))
    return deadline - time.monotonic() > 0


class _Retries:
    """When a call's retry loop stops: at its time limit, or sooner when no server answers.

    A transient error the server reports (a deadlock, a leader switch) is
    retried until ``limit``; a connection that cannot be made or is lost only
    for ``unreachable`` seconds after the first such failure in a row, so a
    call to a Neo4j that is down fails in seconds, reads included, while an
    outage shorter than that (a dropped connection, a proxy's blip) is still
    ridden out. The run starts at the failure, not at the attempt: a long
    transaction cut after minutes still gets its retries.
    """

    def __init__(self, limit: float, unreachable: float) -> None:
        self.limit = limit
        self.deadline = time.monotonic() + limit
        self.unreachable = min(unreachable, limit)
        self.waited = limit  # the bound that ended the loop, for its message
        self._delays = _backoff()
        self._silent_since: float | None = None

    def again(self, e: BaseException) -> bool:
        """After attempt ``e`` failed: wait, and say whether another attempt may start."""
        from neo4j.exceptions import Neo4jError

        if isinstance(e, Neo4jError):
            self._silent_since = None  # the server answered, if with an error
        elif self._silent_since is None:
            self._silent_since = time.monotonic()
        until, self.waited = self.deadline, self.limit
        if self._silent_since is not None and self._silent_since + self.unreachable < until:
            until, self.waited = self._silent_since + self.unreachable, self.unreachable
        return _wait(next(self._delays), until)


_SCHEMA_RACE_CODES = (
    "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
    "Neo.ClientError.Schema.ConstraintAlreadyExists",
    "Neo.ClientError.Schema.IndexAlreadyExists",
)

HOW_TO_START = (
    "start one with `ctxneo neo4j start` (Neo4j from Maven jars, needs Java 17) or "
    "`docker compose up -d neo4j`, or point NEO4J_URI at a running server"
)


def _live(rows: Iterable[Any]) -> list[Fact]:
    """The facts of rows read, but those a clear deleted while the read ran: a fact read
    as its relationship was deleted comes back with no properties, no number."""
    return [_fact(r) for r in rows if r["seq"] is not None]


def _fact(row: Any, suffix: str = "") -> Fact:
    get = row.get if hasattr(row, "get") else row.__getitem__
    if suffix:
        return Fact(
            get(f"s{suffix}"),
            get(f"p{suffix}"),
            get(f"o{suffix}"),
            get(f"seq{suffix}"),
            get(f"vf{suffix}"),
            get(f"vt{suffix}"),
            get(f"sp{suffix}"),
            get(f"t{suffix}"),
            get(f"f{suffix}"),
        )
    return Fact(
        get("s"),
        get("p"),
        get("o"),
        get("seq"),
        get("valid_from"),
        get("valid_to"),
        get("speaker"),
        get("turn_id"),
        get("fact_id"),
        get("text"),
    )


@functools.lru_cache(maxsize=1024)
def namespace_tag(namespace: str) -> str:
    """The prefix of this namespace's stems in the full-text index."""
    return "n" + hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:12]


def search_text(namespace: str, *names: str) -> str:
    """What an entity's ``search`` property holds: its (and its aliases') stems, tagged."""
    return _tagged(namespace_tag(namespace), names)


@functools.lru_cache(maxsize=8192)
def _search_of(tag: str, name: str) -> str:
    """One name's search text (kept: batches merge the same entities again and again;
    few kept, as a name may be kilobytes)."""
    return _tagged(tag, (name,))


def _tagged(tag: str, names: Sequence[str]) -> str:
    return " ".join(f"{tag}_{key}" for name in names for key in sorted(index_keys(name)))


#: A namespace with more entities than this is not copied into the client (see
#: ctxneo/stores/names.py): its questions' words are looked up on the server, a round trip
#: more per answer, rather than hold its names in every client's memory.
NAMES_MAX = 500_000
#: At most this many changed entities are taken in with a question; a copy further
#: behind is read again whole.
CHANGED_MAX = 2_000
#: Times in a row a question is read again because other clients' writes changed what its
#: words find (then it is answered from what it read).
MOVED_AGAIN = 2
#: ``$since`` for a client that keeps no copy of the names: no entity is that new.
_NO_COPY = MAX_SEQ
#: Described reads kept (see Neo4jStore._described_kept).
DESCRIBED_KEPT = 256

#: How long a write (or a read) keeps retrying before it reports the store unavailable.
WRITE_TIMEOUT = 15.0
#: What Neo4j says when it ends a transaction at its time limit: running past it, or
#: still waiting for a lock when it passed.
_ENDED_BY_TIME_LIMIT = frozenset(
    {
        "Neo.ClientError.Transaction.TransactionTimedOut",
        "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
        "Neo.ClientError.Transaction.LockClientStopped",
    }
)

#: Seconds to wait for a Neo4j that does not answer: one connection (its TCP
#: connect and Bolt handshake, or a wait for a pooled connection) and a call's
#: retries while no connection can be made. ``$CTXNEO_NEO4J_CONNECT_TIMEOUT``
#: changes it; it never exceeds a store's time limit.
CONNECT_TIMEOUT = 5.0
#: Rows per UNWIND when a whole memory is loaded in one transaction.
LOAD_BATCH = 5_000

# Drivers a forked child inherited: never used or closed there (their sockets
# are the parent's), only kept from the garbage collector.
_ABANDONED: list[Any] = []


def _quiet_driver_logs() -> None:
    """Keep the driver's warnings (retries, routing) off stderr unless logging is set up.

    Without any handler Python prints warnings through its last-resort handler;
    a NullHandler on the driver's logger stops that, and messages still reach
    the root logger when an application configures one.
    """
    logger = logging.getLogger("neo4j")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())


def connect_timeout() -> float:
    """``$CTXNEO_NEO4J_CONNECT_TIMEOUT`` in seconds, or :data:`CONNECT_TIMEOUT`.

    Raises:
        ConfigError: the value is not a positive number of seconds.
    """
    return seconds_from_env("CTXNEO_NEO4J_CONNECT_TIMEOUT", CONNECT_TIMEOUT)


def _check_seconds(value: object, what: str) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
        raise InvalidFactError(f"{what} must be a positive number of seconds, got {value!r}")


def new_write_id() -> str:
    """A client-generated id stored with a write, to recognise it after an unanswered commit."""
    return uuid.uuid4().hex[:16]


def _reconnect(config: dict[str, Any]) -> Neo4jStore:
    return Neo4jStore(**config).connect()


class Neo4jStore(Store):
    """A memory in one namespace of a Neo4j database.

    The constructor only stores configuration; :meth:`connect` opens the
    driver, proves the server answers and creates the schema.

    Every write carries a client-generated write id (stored on the facts it
    creates or closes). A write is retried on transient errors and lost
    connections until ``timeout`` seconds have passed (a server that cannot be
    reached at all, until ``connection_timeout``); when a commit went out
    but its answer did not come back, the retry first looks the write id up
    under the namespace lock and returns what the committed write did, so a
    committed write is never reported as failed nor applied twice.

    ``connection_timeout`` (default: :func:`connect_timeout`) bounds one
    connection attempt and the retries of a call while Neo4j cannot be
    reached, so a call to a server that is down fails in seconds.

    Raises:
        ConfigError: the URI is not a Bolt one (see :func:`ctxneo.neo4j_uri.check_uri`),
            or ``$CTXNEO_NEO4J_CONNECT_TIMEOUT`` is not a number of seconds.
        InvalidFactError: the namespace or credentials are not strings, or a
            time limit is not a positive number.
    """

    backend = "neo4j"
    reads_ahead = True

    def __init__(
        self,
        uri: str,
        *,
        user: str | None = "neo4j",
        password: str | None = None,
        database: str | None = None,
        namespace: str = "default",
        connection_timeout: float | None = None,
        timeout: float = WRITE_TIMEOUT,
    ) -> None:
        check_namespace(namespace)
        for value, what in ((user, "user"), (password, "password"), (database, "database")):
            if value is not None:
                check_text(value, what, secret=what == "password")
        _check_seconds(timeout, "timeout")
        if connection_timeout is None:
            connection_timeout = connect_timeout()
        _check_seconds(connection_timeout, "connection_timeout")
        self.uri = check_uri(uri)
        self.user = user
        self.password = password
        self.database = database
        self.namespace = namespace
        self.connection_timeout = float(min(connection_timeout, timeout))
        self.timeout = float(timeout)
        # Stems are indexed as "<tag>_<stem>" so a full-text query meets only this namespace.
        self._tag = namespace_tag(namespace)
        self._driver: Any = None
        self._pid = os.getpid()
        self._local = threading.local()
        self.reads = 0  # read round trips so far (each store question is one)
        #: Every commit numbered up to this one is known to be fully applied: this
        #: store's own acknowledged writes, and what a settled read found (see
        #: _read_settled). Threads race on it only to lower it: a re-read too many.
        self._applied = 0
        #: The predicates as the last vocabulary read found them (see known_predicates).
        self._known_predicates: list[str] | None = None
        #: What finds an entity in this namespace, kept in process (see
        #: ctxneo/stores/names.py), unless the namespace holds more than names_max.
        self._names = NameMirror()
        self.names_max = NAMES_MAX
        self._names_off = False
        #: Described reads by what they asked, each valid at its ``at``: served again
        #: while the memory stands at the number this client last read it at (``_at``),
        #: and carried over this client's own writes that leave their relations alone.
        self._described_kept: dict[DescribedAsk, Described] = {}
        self._at: int | None = None
        self._kept_lock = threading.Lock()
        self.reconciled = 0  # writes whose unanswered commit was found applied

    def _config(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "user": self.user,
            "password": self.password,
            "database": self.database,
            "namespace": self.namespace,
            "connection_timeout": self.connection_timeout,
            "timeout": self.timeout,
        }

    def __reduce__(self) -> tuple[Any, ...]:
        # A child started with multiprocessing's spawn connects on its own.
        return (_reconnect, (self._config(),))

    # -- connection -------------------------------------------------------------

    def connect(self) -> Neo4jStore:
        """Open the driver, check the server answers, create the schema (idempotent).

        Raises:
            StoreUnavailable: nothing answers at the URI, or the credentials are refused.
        """
        from neo4j.exceptions import Neo4jError

        self._open_driver()
        try:
            self._create_schema()
        except Neo4jError as e:
            self.close()
            raise StoreError(
                f"Neo4j at {redact(self.uri)}: cannot create the schema: {e.message}"
            ) from e
        return self

    def _open_driver(self) -> None:
        import neo4j
        from neo4j.exceptions import (
            AuthError,
            ConfigurationError,
            Neo4jError,
            ServiceUnavailable,
        )

        _quiet_driver_logs()
        auth = (self.user or "neo4j", self.password) if self.password else None
        where = redact(self.uri)
        try:
            self._driver = neo4j.GraphDatabase.driver(
                self.uri,
                auth=auth,
                connection_timeout=self.connection_timeout,
                # The acquisition includes making a new connection: bounded alike, so a
                # server that is down fails an attempt in seconds, not at the time limit.
                connection_acquisition_timeout=self.connection_timeout,
                max_transaction_retry_time=0.0,  # retries are ours: they know the write id
                notifications_min_severity="OFF",
            )
            self._driver.verify_connectivity()
        except (ServiceUnavailable, OSError) as e:
            self.close()
            raise StoreUnavailable(
                f"cannot reach Neo4j at {where}: {_reason(e)}; {HOW_TO_START}"
            ) from e
        except AuthError as e:
            self.close()
            raise StoreUnavailable(
                f"Neo4j at {where} refused the credentials for user "
                f"{self.user or 'neo4j'!r}: give the right user and password "
                "(--user/--password or NEO4J_USER/NEO4J_PASSWORD on the command line, "
                "user=/password= in Python)"
            ) from e
        except (ConfigurationError, ValueError) as e:
            self.close()
            raise StoreUnavailable(f"bad Neo4j URI {where!r}: {_reason(e)}") from e
        except Neo4jError as e:
            self.close()
            if e.code == "Neo.ClientError.Security.AuthenticationRateLimit":
                raise StoreUnavailable(
                    f"Neo4j at {where} locks user {self.user or 'neo4j'!r} out for a while "
                    "after failed logins (someone tried wrong passwords): wait and try again"
                ) from e
            raise StoreUnavailable(f"Neo4j at {where} refused the connection: {e.message}") from e
        self._pid = os.getpid()

    def _create_schema(self) -> None:
        from neo4j.exceptions import ClientError

        with self._session() as session:
            for statement in [
                *cypher.statements("search_schema"),  # (first: see the file)
                *cypher.statements("schema"),
                *cypher.statements("said_schema"),
            ]:
                try:
                    session.run(statement).consume()
                except ClientError as e:
                    # Another client created the same rule between our check and ours.
                    if e.code not in _SCHEMA_RACE_CODES:
                        raise
            session.run("CALL db.awaitIndexes(120)").consume()

    def _session(self, **kwargs: Any) -> Any:
        if self._driver is not None and self._pid != os.getpid():
            # A forked child: the driver's connections are the parent's sockets.
            _ABANDONED.append(self._driver)
            self._driver = None
            self._local = threading.local()
            self._open_driver()
        if self._driver is None:
            raise StoreError("the Neo4j store is not connected (call connect())")
        # One bookmark manager for reads and writes: a read sees this store's
        # earlier writes, even on a cluster.
        return self._driver.session(
            database=self.database,
            bookmark_manager=self._driver.execute_query_bookmark_manager,
            **kwargs,
        )

    def _reader(self) -> Any:
        """This thread's read session, kept open: a session per question costs a round trip."""
        import neo4j

        session = getattr(self._local, "reader", None)
        if session is None or session.closed() or self._pid != os.getpid():
            session = self._session(default_access_mode=neo4j.READ_ACCESS)
            self._local.reader = session
        return session

    def _writer(self) -> Any:
        """This thread's session for one-statement writes, kept open like the reader's
        (the driver's own retries off: retries are ours, they know the write id)."""
        session = getattr(self._local, "writer", None)
        if session is None or session.closed() or self._pid != os.getpid():
            session = self._session(disable_auto_commit_retries=True)
            self._local.writer = session
        return session

    def _drop_writer(self) -> None:
        session = getattr(self._local, "writer", None)
        self._local.writer = None
        if session is not None and self._pid == os.getpid():
            with contextlib.suppress(Exception):  # its connection is already lost
                session.close()

    def close(self) -> None:
        if self._driver is not None:
            if self._pid == os.getpid():
                self._driver.close()  # closes every session's connection too
            else:
                _ABANDONED.append(self._driver)
            self._driver = None
        self._local = threading.local()

    # -- running statements -------------------------------------------------------

    def _lost(self, e: BaseException) -> str:
        return f"lost Neo4j at {redact(self.uri)}: {_reason(e)}"

    def _read(self, name: str, **params: Any) -> list[Any]:
        """One read round trip, routed to a reader; retried on a lost connection until
        the time limit."""
        return self._read_text(name, cypher.load(name), **params)

    def _read_settled(self, name: str, statement: str, /, **params: Any) -> list[Any]:
        """:meth:`_read_text` of a statement pinned to a sequence number (returning
        ``at``, ``since`` and ``witness`` columns), read again when it met the write
        numbered ``at``: Neo4j lets a read see a commit while the server is still
        applying it, an old value closed and its successor not yet there (1 read in
        about 2,000 beside a busy writer). Pinned to the same ``at``, reads are
        repeated until two agree; the witnesses (facts closed by that write, which
        let a read tell it met the write although its successor was missing) are
        then dropped."""
        rows = self._read_text(name, statement, **params)
        if rows:
            at = rows[0]["at"]
            if at > self._applied and any(_met(r) for r in rows):
                for _ in range(SETTLE_READS):
                    again = self._read_text(name, statement, **{**params, "at": at})
                    settled = _shape(again) == _shape(rows)
                    rows = again
                    if settled:
                        self._applied = max(self._applied, at)
                        break
        return [r for r in rows if not r["witness"]]

    def _read_text(self, name: str, statement: str, /, **params: Any) -> list[Any]:
        """:meth:`_read` of a statement built from ``name``'s file (positional-only: a
        statement's parameters include ``$query``)."""
        from neo4j.exceptions import DriverError, Neo4jError

        self.reads += 1
        values = {"ns": self.namespace, **params}
        retries = _Retries(self.timeout, self.connection_timeout)
        while True:
            session = self._reader()
            try:
                return list(session.run(statement, values))
            except (DriverError, Neo4jError) as e:
                self._local.reader = None
                if isinstance(e, Neo4jError) and not e.is_retryable():
                    raise StoreError(f"Neo4j query {name!r} failed: {e.message}") from e
                if not retries.again(e):
                    raise StoreUnavailable(
                        f"{self._lost(e)} (gave up after {retries.waited:g} s)"
                    ) from e

    def _write(
        self,
        work: Callable[[Any], _T],
        reconcile: Callable[[Any], _T | None] | None = None,
        *,
        write_id: str = "",
        timeout: float | None = None,
        alone: tuple[str, dict[str, Any], Callable[[list[Any]], _T]] | None = None,
    ) -> _T:
        """Run ``work(tx)`` as one transaction, retried until the time limit.

        ``alone`` is the same write as one statement (its name, parameters, and what
        its rows mean): its first attempt runs it as a transaction of its own on
        this thread's kept session, one round trip where a transaction takes three
        (begin, run, commit). Its answer comes after the commit, so when it is lost
        the outcome is unknown, and the retries are transactions that reconcile
        first.

        When an attempt's commit went out unanswered (the connection dropped
        while committing), the next attempt first runs ``reconcile(tx)``: it
        takes the namespace lock and looks the write up by its id; what it
        finds is returned instead of writing again.

        Raises:
            StoreError: the server refused the write (not a transient error).
            WriteOutcomeUnknown: a commit went unanswered and the server could
                not be reached again in time to find out whether it applied.
            StoreUnavailable: the server could not be reached in time (the
                write was not applied).
        """
        from neo4j.exceptions import DriverError, IncompleteCommit, Neo4jError

        limit = self.timeout if timeout is None else timeout
        retries = _Retries(limit, self.connection_timeout)
        started = time.monotonic()
        unknown = False
        while True:
            committing = solo = False
            try:
                if alone is not None:
                    name, params, rows = alone
                    alone = None
                    committing = solo = True  # (it commits as it runs)
                    return rows(self._run_alone(name, retries.deadline, params))
                with self._session() as session:
                    tx = session.begin_transaction(
                        timeout=max(1.0, retries.deadline - time.monotonic())
                    )
                    try:
                        if unknown and reconcile is not None:
                            found = reconcile(tx)
                            if found is not None:
                                tx.rollback()
                                self.reconciled += 1
                                return found
                        result = work(tx)
                        committing = True
                        tx.commit()
                        return result
                    finally:
                        tx.close()
            except (DriverError, Neo4jError, _ClearedUnder) as e:
                if solo:
                    self._drop_writer()
                    committing = not _never_sent(e)
                # A connection lost while committing leaves the outcome unknown;
                # one lost before the commit went out leaves nothing applied.
                unknown = unknown or committing or isinstance(e, IncompleteCommit)
                if isinstance(e, Neo4jError) and (e.code or "") in _ENDED_BY_TIME_LIMIT:
                    # The time it really took: waiting for a lock or a connection
                    # can run past the limit the server was given.
                    took = time.monotonic() - started
                    raise StoreError(
                        f"the server ended the write after {took:.0f} s (its time limit: "
                        f"{limit:g} s; another write may have held this memory's lock); "
                        "nothing of it applied"
                    ) from e
                if isinstance(e, Neo4jError) and "long overflow" in (e.message or ""):
                    next_seq(MAX_SEQ)  # one write's counter ran past Neo4j's largest integer
                if isinstance(e, Neo4jError) and not e.is_retryable() and not _cleared_under(e):
                    raise StoreError(f"Neo4j write failed: {e.message}") from e
                if not retries.again(e):
                    if unknown and reconcile is not None:
                        raise WriteOutcomeUnknown(
                            f"{self._lost(e)}; a commit went unanswered and the server did not "
                            f"answer again within {retries.waited:g} s, so whether write "
                            f"{write_id} applied is unknown: read the memory before writing it "
                            "again",
                            write_id=write_id,
                        ) from e
                    raise StoreUnavailable(
                        f"{self._lost(e)} (gave up after {retries.waited:g} s)"
                    ) from e

    def _tx(self, tx: Any, name: str, **params: Any) -> list[Any]:
        return list(tx.run(cypher.load(name), {"ns": self.namespace, **params}))

    def _lock_memory(self, tx: Any) -> Any:
        """Take the namespace's write lock (``lock_memory.cypher``); the memory node's
        state. No row: a clear deleted the node while this write waited for the lock."""
        rows = self._tx(tx, "lock_memory")
        if not rows:
            raise _ClearedUnder(self.namespace)
        (state,) = rows
        return state

    def _run_alone(self, name: str, deadline: float, params: dict[str, Any]) -> list[Any]:
        """``name`` as a transaction of its own (auto-commit), marked with the write's
        id in its metadata (what ``SHOW TRANSACTIONS`` shows of it, and how the
        fault-injecting proxy knows it commits)."""
        import neo4j

        query = neo4j.Query(
            cypher.load(name),
            metadata={"ctxneo_write": params["write_id"]},
            timeout=max(1.0, deadline - time.monotonic()),
        )
        return list(self._writer().run(query, {"ns": self.namespace, **params}))

    def _search(self, name: str) -> str:
        return _search_of(self._tag, name)

    def _found(self, tx: Any, keys: Iterable[tuple[str, str]], write_id: str) -> list[Any]:
        """Under the namespace lock: the facts write ``write_id`` created or closed."""
        self._lock_memory(tx)
        return self._tx(
            tx, "find_write", keys=[{"s": s, "p": p} for s, p in keys], write_id=write_id
        )

    # -- writes -------------------------------------------------------------------

    def remember(self, fact: NewFact) -> Fact:
        """One fact in one statement: the common write, one round trip."""
        if not isinstance(fact, NewFact):
            raise InvalidFactError(f"not a fact: {fact!r}"[:200])
        new = fact.checked()
        write_id = new_write_id()

        params = {
            "s": new.subject,
            "p": new.predicate,
            "o": new.object,
            "s_search": self._search(new.subject),
            "o_search": self._search(new.object),
            "multi": new.multi,
            "speaker": new.speaker,
            "turn_id": new.turn_id,
            "fact_id": new.fact_id,
            "text": new.text,
            "said": list(said_stems(new.text)) if new.text else [],
            "said_cap": MAX_SAID_PER_ENTITY,
            "tag": self._tag,
            "write_id": write_id,
        }

        committed: list[Callable[[], None]] = []  # as in write()

        def stored(rows: list[Any]) -> Fact:
            if not rows:
                raise _ClearedUnder(self.namespace)
            (row,) = rows
            committed.clear()
            if row["created"]:
                committed.append(
                    functools.partial(self._moved, row["seq"] - 1, row["seq"], {new.predicate})
                )
                committed.append(
                    functools.partial(
                        self._names_wrote,
                        {"epoch": row["epoch"], "names": row["names"] - 1},
                        entities=[new.subject, new.object],
                        said={new.subject: row["s_said"] or [], new.object: row["o_said"] or []},
                        predicates=row["predicates"],
                        multi=row["multi"],
                    )
                )
            return _fact(row)

        def work(tx: Any) -> Fact:
            return stored(self._tx(tx, "remember_one", **params))

        def reconcile(tx: Any) -> Fact | None:
            committed.clear()
            rows = self._found(tx, [(new.subject, new.predicate)], write_id)
            made = [_fact(r) for r in rows if r["created"]]
            return made[0] if made else None

        made = self._write(
            work, reconcile, write_id=write_id, alone=("remember_one", params, stored)
        )
        self._applied = max(self._applied, made.seq)
        for taken in committed:
            taken()
        return made

    def write(self, facts: Sequence[NewFact]) -> Written:
        checked = check_facts(facts)
        if not checked:
            return Written([], frozenset(), [])
        write_id = new_write_id()
        # What the committed write changed, for what this client keeps (its copy of the
        # names, its described reads): set by the transaction that committed; a write
        # found applied after an unanswered commit leaves them to the next read.
        committed: list[Callable[[], None]] = []

        def work(tx: Any) -> Written:
            committed.clear()
            state = self._lock_memory(tx)
            seq, multi, predicates = state["seq"], set(state["multi"]), set(state["predicates"])
            names = state["names"] + 1  # the names counter, when this write creates a fact
            # A key of a predicate multi-valued before this write only needs its own
            # values looked up (a fact that declares it in this batch may follow one
            # that still closes every current value, so that key is read whole).
            many = set(multi)
            objects: dict[tuple[str, str], set[str]] = {}
            for f in checked:
                objects.setdefault((f.subject, f.predicate), set()).add(f.object)
            wanted: dict[str, list[dict[str, Any]]] = {}
            for f in checked:
                wanted.setdefault(f.subject, [])
                wanted.setdefault(f.object, [])
            for s, p in sorted(objects):
                wanted[s].append({"p": p, "objects": sorted(objects[s, p]) if p in many else None})
            (merged,) = self._tx(
                tx,
                "merge_current",
                entities=[
                    {"name": n, "search": self._search(n), "keys": ks}
                    for n, ks in sorted(wanted.items())
                ],
                names=names,
            )
            ids = dict(zip(merged["names"], merged["ids"], strict=True))
            current: dict[tuple[str, str], list[Fact]] = {}
            for name, rows in zip(merged["names"], merged["current"], strict=True):
                for row in rows:
                    current.setdefault((name, row["p"]), []).append(_fact({"s": name, **row}))
            for facts_ in current.values():
                facts_.sort(key=lambda f: f.seq)
            # Apply the batch in order, exactly as one-at-a-time writes would.
            created: dict[int, Fact] = {}
            closes: list[dict[str, Any]] = []
            latest: dict[int, Fact] = {}
            out: list[Fact] = []
            for new in checked:
                multi |= {new.predicate} if new.multi else set()
                key = (new.subject, new.predicate)
                live = current.setdefault(key, [])
                same, closing = supersede(live, new, new.predicate in multi)
                if same is not None:
                    out.append(same)
                    continue
                seq = next_seq(seq)
                for old in closing:
                    live.remove(old)
                    latest[old.seq] = old.closed_at(seq)
                    if old.seq in created:
                        created[old.seq] = latest[old.seq]
                    else:
                        closes.append(
                            {"s": old.subject, "p": old.predicate, "seq": old.seq, "at": seq}
                        )
                fact = Fact(
                    new.subject,
                    new.predicate,
                    new.object,
                    seq,
                    seq,
                    None,
                    new.speaker,
                    new.turn_id,
                    new.fact_id,
                    new.text,
                )
                live.append(fact)
                created[seq] = fact
                predicates.add(new.predicate)
                out.append(fact)
            if closes:
                self._tx(tx, "close_facts", closes=closes, write_id=write_id)
            said: dict[str, list[str]] = {}
            if created:
                # (a text of function words alone says no stem: that entity is left as it is)
                said = {n: stems for n, stems in said_of(created.values()).items() if stems}
                if said:
                    self._tx(
                        tx,
                        "add_said",
                        entities=[{"id": ids[n], "said": said[n]} for n in sorted(said)],
                        said_cap=MAX_SAID_PER_ENTITY,
                        tag=self._tag,
                        names=names,
                    )
                self._tx(
                    tx,
                    "create_facts",
                    facts=[
                        {**f.to_dict(), "sid": ids[f.subject], "oid": ids[f.object]}
                        for f in created.values()
                    ],
                    write_id=write_id,
                )
            self._tx(
                tx,
                "set_memory",
                seq=seq,
                multi=sorted(multi),
                predicates=sorted(predicates),
                first=min(created) if created else None,
                names=names if created else None,
            )
            committed.append(
                functools.partial(
                    self._moved,
                    state["seq"],
                    seq,
                    {f.predicate for f in created.values()} | {c["p"] for c in closes},
                )
            )
            if created:
                committed.append(
                    functools.partial(
                        self._names_wrote,
                        state,
                        entities=list(wanted),
                        said=said,
                        predicates=sorted(predicates),
                        multi=sorted(multi),
                    )
                )
            # Every fact as it now stands, closed later in this batch or not.
            return Written(
                [latest.get(f.seq, f) for f in out],
                frozenset(created),
                sorted((latest[c["seq"]] for c in closes), key=lambda f: f.seq),
            )

        def reconcile(tx: Any) -> Written | None:
            committed.clear()
            keys = sorted({(f.subject, f.predicate) for f in checked})
            rows = self._found(tx, keys, write_id)
            made = [_fact(r) for r in rows if r["created"]]
            if not made:
                return None  # not applied (or it changed nothing): writing it now is right
            closed = sorted((_fact(r) for r in rows if not r["created"]), key=lambda f: f.seq)
            return Written(
                self._replayed(tx, checked, made), frozenset(f.seq for f in made), closed
            )

        written = self._write(work, reconcile, write_id=write_id)
        self._applied = max(self._applied, *written.created, 0)
        for taken in committed:
            taken()
        return written

    def _forget(self) -> None:
        """Drop what this client keeps of the namespace (it cleared or loaded it)."""
        self._names.reset()
        self._names_off = False
        with self._kept_lock:
            self._described_kept.clear()
            self._at = None

    def _names_wrote(
        self,
        state: Any,
        *,
        entities: Iterable[str] = (),
        said: dict[str, list[str]] | None = None,
        aliases: Iterable[tuple[str, str]] = (),
        predicates: Sequence[str] | None = None,
        multi: Sequence[str] | None = None,
    ) -> None:
        """This client's committed write into its copy of the names, when the copy held
        what the write was made from (``state``: its ``lock_memory`` row); else the next
        read brings the copy up to date."""
        if self._names.current_at(state["epoch"], state["names"]):
            self._names.wrote(
                state["epoch"],
                state["names"] + 1,
                entities,
                said or {},
                aliases,
                predicates,
                multi,
            )

    def _replayed(self, tx: Any, batch: list[NewFact], made: list[Fact]) -> list[Fact]:
        """What ``remember_many(batch)`` returned, rebuilt from the facts it created.

        Created facts have increasing numbers in batch order; a fact that
        created nothing restated a value current at that point: the newest
        fact with that value made earlier in the batch, or before it.
        """
        made = sorted(made, key=lambda f: f.seq)
        first = made[0].seq
        pending = iter(made)
        nxt = next(pending, None)
        latest: dict[tuple[str, str, str], Fact] = {}
        out: list[Fact] = []
        for new in batch:
            triple = (new.subject, new.predicate, new.object)
            if nxt is not None and (nxt.subject, nxt.predicate, nxt.object) == triple:
                latest[triple] = nxt
                out.append(nxt)
                nxt = next(pending, None)
                continue
            if triple not in latest:
                rows = self._tx(
                    tx,
                    "history",
                    subject=new.subject,
                    predicate=new.predicate,
                    limit=None,
                    at=None,
                )
                before = [f for f in map(_fact, rows) if f.object == new.object and f.seq < first]
                if not before:
                    raise StoreError(f"cannot rebuild the result of write {made[0]}")
                latest[triple] = before[-1]
            out.append(latest[triple])
        return out

    def retract(self, subject: str, predicate: str, obj: str | None = None) -> list[Fact]:
        check_name(subject, "subject")
        predicate = check_predicate(predicate)
        if obj is not None:
            check_name(obj, "object")
        write_id = new_write_id()
        committed: list[Callable[[], None]] = []  # as in write()

        def work(tx: Any) -> list[Fact]:
            committed.clear()
            state = self._lock_memory(tx)
            live = [
                _fact(r)
                for r in self._tx(
                    tx,
                    "current_of_keys",
                    subjects=[{"s": subject, "keys": [{"p": predicate, "objects": None}]}],
                )
            ]
            live = sorted((f for f in live if obj is None or f.object == obj), key=lambda f: f.seq)
            if not live:
                return []
            at = next_seq(state["seq"])
            self._tx(
                tx,
                "close_facts",
                closes=[{"s": f.subject, "p": f.predicate, "seq": f.seq, "at": at} for f in live],
                write_id=write_id,
            )
            self._tx(
                tx,
                "set_memory",
                seq=at,
                multi=state["multi"],
                predicates=state["predicates"],
                first=at,
                names=None,
            )
            committed.append(functools.partial(self._moved, state["seq"], at, {predicate}))
            return [f.closed_at(at) for f in live]

        def reconcile(tx: Any) -> list[Fact] | None:
            committed.clear()
            closed = [_fact(r) for r in self._found(tx, [(subject, predicate)], write_id)]
            return closed or None

        closed = self._write(work, reconcile, write_id=write_id)
        self._applied = max(self._applied, *(f.valid_to or 0 for f in closed), 0)
        for taken in committed:
            taken()
        return closed

    def declare_multi_valued(self, predicates: Iterable[str]) -> None:
        if isinstance(predicates, str):
            predicates = [predicates]
        wanted = {check_predicate(p) for p in predicates}

        def work(tx: Any) -> None:  # idempotent: a retry after an unanswered commit is harmless
            state = self._lock_memory(tx)
            self._tx(
                tx,
                "set_memory",
                seq=state["seq"],
                multi=sorted(set(state["multi"]) | wanted),
                predicates=state["predicates"],
                first=None,
                names=None,
            )

        self._write(work)
        self._names.declared(wanted, set())

    def withdraw_multi_valued(self, predicates: Iterable[str]) -> None:
        if isinstance(predicates, str):
            predicates = [predicates]
        unwanted = {check_predicate(p) for p in predicates}

        def work(tx: Any) -> None:  # idempotent, like declare_multi_valued
            state = self._lock_memory(tx)
            self._tx(
                tx,
                "set_memory",
                seq=state["seq"],
                multi=sorted(set(state["multi"]) - unwanted),
                predicates=state["predicates"],
                first=None,
                names=None,
            )

        self._write(work)
        self._names.declared(set(), unwanted)

    def multi_valued(self) -> frozenset[str]:
        (row,) = self._read("memory_info")
        return frozenset(row["multi"])

    def add_alias(self, phrase: str, entity: str) -> None:
        check_name(phrase, "alias phrase")
        check_name(entity, "entity")

        committed: list[Callable[[], None]] = []  # as in write()

        def work(tx: Any) -> None:  # idempotent, like declare_multi_valued
            committed.clear()
            state = self._lock_memory(tx)  # like every write, under the lock
            self._tx(
                tx,
                "add_alias",
                entity=entity,
                phrase=phrase,
                entity_search=self._search(entity),
                phrase_search=self._search(phrase),
            )
            committed.append(
                functools.partial(self._names_wrote, state, aliases=[(phrase, entity)])
            )

        self._write(work)
        for taken in committed:
            taken()

    def clear(self) -> None:
        """Delete this namespace: its entities, facts and memory node (whatever state a failed
        load or write left them in). Idempotent; retried like a write."""
        from neo4j.exceptions import DriverError, Neo4jError

        retries = _Retries(self.timeout, self.connection_timeout)
        while True:
            try:
                with self._session() as session:  # CALL ... IN TRANSACTIONS needs auto-commit
                    session.run(cypher.load("clear_facts"), {"ns": self.namespace}).consume()
                    session.run(cypher.load("clear"), {"ns": self.namespace}).consume()
                    session.run(cypher.load("clear_memory_node"), {"ns": self.namespace}).consume()
                self._forget()
                # Numbers start again from 1. (Another client's store still takes numbers
                # up to what it knew applied as settled: until the new ones pass it, its
                # reads are not re-read, and a commit being applied can be met again.)
                self._applied = 0
                return
            except (DriverError, Neo4jError) as e:
                if isinstance(e, Neo4jError) and not e.is_retryable():
                    raise StoreError(
                        f"cannot clear namespace {self.namespace!r}: {e.message}"
                    ) from e
                if not retries.again(e):
                    raise StoreUnavailable(
                        f"{self._lost(e)} (gave up after {retries.waited:g} s)"
                    ) from e

    # -- whole memories -------------------------------------------------------------

    def load(
        self,
        image: MemoryImage,
        *,
        progress: Callable[[int], None] = lambda n: None,
        timeout: float | None = None,
    ) -> None:
        """Write a whole memory into this namespace, all or nothing: one transaction.

        The image must be valid (see :func:`ctxneo.export.validated`). ``progress``
        is called with the number of facts and entities written by each batch.
        ``timeout`` defaults to the store's time limit plus one second per
        2,000 facts.

        Raises:
            NamespaceInUse: the namespace already holds a memory (nothing is written).
            StoreError, StoreUnavailable: the load failed; the namespace is as it was.
        """
        load_id = new_write_id()
        said = said_of(image.facts)
        entities = [
            {
                "name": n,
                "search": search_text(self.namespace, n, *image.aliases.get(n, ())),
                "aliases": list(image.aliases.get(n, ())),
                "said": said.get(n, []),
                "said_search": " ".join(f"{self._tag}_{x}" for x in said.get(n, [])),
            }
            for n in image.entities
        ]
        facts = [f.to_dict() for f in image.facts]

        def work(tx: Any) -> None:
            state = self._lock_memory(tx)
            (used,) = self._tx(tx, "namespace_used")
            if state["seq"] or used["used"]:
                raise NamespaceInUse(
                    f"namespace {self.namespace!r} at {redact(self.uri)} already holds a "
                    f"memory (last seq {state['seq']}); loading would mix the two: clear it "
                    "first (ctxneo clear) or load into another --namespace"
                )
            ids: dict[str, str] = {}
            for start in range(0, len(entities), LOAD_BATCH):
                rows = entities[start : start + LOAD_BATCH]
                (made,) = self._tx(tx, "load_entities", entities=rows)
                ids.update(zip(made["names"], made["ids"], strict=True))
                progress(len(rows))
            for start in range(0, len(facts), LOAD_BATCH):
                rows = [
                    {**f, "sid": ids[f["subject"]], "oid": ids[f["object"]]}
                    for f in facts[start : start + LOAD_BATCH]
                ]
                self._tx(tx, "create_facts", facts=rows, write_id=None)
                progress(len(rows))
            self._tx(
                tx,
                "finish_load",
                seq=image.last_seq,
                multi=sorted(image.multi),
                predicates=image.predicates,
                load_id=load_id,
            )

        def reconcile(tx: Any) -> bool | None:
            state = self._lock_memory(tx)
            return True if state["load_id"] == load_id else None

        limit = timeout if timeout is not None else self.timeout + len(facts) / 2_000
        self._write(work, reconcile, write_id=load_id, timeout=limit)  # type: ignore[arg-type]
        self._applied = max(self._applied, image.last_seq)
        self._forget()  # (the names read again whole when next used: a load is a new epoch)
        self._settle()

    def _settle(self) -> None:
        """Wait until the indexes are online (a load is then searchable: a search itself
        waits for the writes committed before it, see cypher/vocabulary_words.cypher)."""
        with self._session() as session:
            session.run("CALL db.awaitIndexes(120)").consume()

    def image(self) -> MemoryImage:
        """The whole memory, read under the namespace's write lock: no write lands midway."""

        def work(tx: Any) -> MemoryImage:
            state = self._tx(tx, "lock_existing")
            if not state:
                return MemoryImage((), {}, frozenset(), 0)
            facts = tuple(_fact(r) for r in self._tx(tx, "all_facts"))
            aliases = {r["name"]: tuple(r["aliases"]) for r in self._tx(tx, "aliases")}
            return MemoryImage(facts, aliases, frozenset(state[0]["multi"]), state[0]["seq"])

        return self._write(work)

    # -- reads --------------------------------------------------------------------

    # -- the names, kept in process -----------------------------------------------

    def _names_kept(self) -> bool:
        """Whether this client links questions from its copy of the names (read whole
        the first time, a round trip), or on the server (a namespace too big to copy)."""
        if self._names_off:
            return False
        if not self._names.loaded:
            self._load_names()
        return not self._names_off

    def warm(self) -> None:
        """See :meth:`Store.warm`: the names read whole (one round trip, 0.5-0.8 s for
        MetaQA's 43k entities here), unless the copy is kept already or the namespace
        is too big to copy."""
        self._names_kept()

    def _load_names(self) -> None:
        (row,) = self._read("names_all", max=self.names_max)
        if row["entities"] > self.names_max:
            self._names_off = True
            return
        self._names.load(row["memory"], row["all"])

    def _take_names(self, memory: dict[str, Any], changed: list[Any]) -> None:
        """Take in what a read found changed; read the copy again whole when it cannot
        be brought up to date that way (the namespace was replaced, or too much
        changed)."""
        if not self._names.take(memory, changed, complete=len(changed) < CHANGED_MAX):
            self._load_names()

    def _check_served(self, memory: dict[str, Any], changed: list[Any]) -> None:
        """After a read that returned the names' changes: take them in, and when they
        change the vocabulary this thread's question was served, say so (see
        :class:`VocabularyMoved`)."""
        self._take_names(memory, changed)
        served: Vocabulary | None = getattr(self._local, "served", None)
        asked = getattr(self._local, "asked", None)
        self._local.served = None
        if served is None or asked is None or self._names_off:
            return
        keys, limit, version = asked
        # (worked out again only when the copy took in a change since it was served)
        same = version == self._names.version
        if not same:
            now, _ = self._names.vocabulary(keys, limit)
            same = (now.hits, now.predicates, now.multi) == (
                served.hits,
                served.predicates,
                served.multi,
            )
        again = getattr(self._local, "again", 0)
        if same or again >= MOVED_AGAIN:
            self._local.again = 0
            return
        self._local.again = again + 1
        raise VocabularyMoved

    def confirm_vocabulary(self) -> None:
        """See :meth:`Store.confirm_vocabulary`: a round trip only when the question made
        no neighbourhood read (which brings the names' changes with it)."""
        self._local.ahead = None
        if getattr(self._local, "served", None) is None:
            return
        row = self._names_since()
        self._check_served(row["memory"], row["changed"])

    def _names_since(self) -> Any:
        """The names' changes since the copy's position, read alone (one round trip)."""
        statement = "\n".join(
            [cypher.load("names_since"), cypher.load("names_changed"), "RETURN memory, changed"]
        )
        (row,) = self._read_text(
            "names_since", statement, since=self._names.since, changed_max=CHANGED_MAX
        )
        return row

    def vocabulary(
        self,
        keys: Sequence[str],
        limit: int = MAX_CANDIDATES,
        described: DescribedAsk | None = None,
    ) -> Vocabulary:
        """See :meth:`Store.vocabulary`: served from the names kept in process, without a
        round trip, and checked by the question's next read (see
        :meth:`confirm_vocabulary`); ``described`` is read in a round trip of its own
        (see :meth:`_described_read`). A namespace too big to copy is read on the server
        (:meth:`_vocabulary_read`)."""
        if not self._names_kept():
            return self._vocabulary_read(keys, limit, described)
        found, version = self._names.vocabulary(keys, limit)
        self._local.served, self._local.asked = found, (keys, limit, version)
        ahead = [check_predicate(p) for p in described.predicates] if described else []
        if described is None or not ahead:
            return found
        with self._kept_lock:
            kept = self._described_kept.get(described)
            if kept is None or kept.at != self._at:
                kept = self._described_parts(described)
        if kept is None:
            kept = self._described_read(described, ahead)
            with self._kept_lock:
                self._described_kept.pop(described, None)  # (newest last: dropped last)
                self._described_kept[described] = kept
                while len(self._described_kept) > DESCRIBED_KEPT:
                    del self._described_kept[next(iter(self._described_kept))]
                self._at = kept.at
        return Vocabulary(found.hits, found.predicates, found.multi, kept)

    def _described_parts(self, described: DescribedAsk) -> Described | None:
        """``described`` put together from the relations of described reads kept at the
        number the memory last stood at, when they hold every one of its relations: each
        relation's part is read on its own, so a question naming relations in a new
        combination costs no round trip once each was read, and sends no new statement
        text (each one the server plans anew, 0.3-0.8 s). (Under ``_kept_lock``.)"""
        wanted = dict.fromkeys(described.predicates)
        bounds = (described.max_subjects, described.as_of, described.limit)
        parts: dict[str, list[Fact]] = {}
        for ask, kept in reversed(self._described_kept.items()):  # (newest first)
            if kept.at != self._at or (ask.max_subjects, ask.as_of, ask.limit) != bounds:
                continue
            parts.update((p, kept.facts[p]) for p in ask.predicates if p in wanted)
            if len(parts) == len(wanted):
                return Described(described, kept.at, {p: parts[p] for p in wanted})
        return None

    def _moved(self, before: int, after: int, relations: Iterable[str]) -> None:
        """This client's committed write took the memory from ``before`` to ``after``,
        creating or closing facts of ``relations``: a described read of other relations
        made at ``before`` reads the same at ``after`` (when nobody else wrote between)."""
        touched = set(relations)
        with self._kept_lock:
            if self._at != before:
                return
            self._at = after
            for ask, kept in list(self._described_kept.items()):
                if kept.at == before and ask.as_of is None and touched.isdisjoint(ask.predicates):
                    self._described_kept[ask] = Described(ask, after, kept.facts)

    def _described_read(self, described: DescribedAsk, ahead: list[str]) -> Described:
        """A question's described relations, before its neighbourhood: one round trip,
        the relations' types written into the text (as facts_of_few_subjects does, so
        that each part starts from its type's relationships), at the sequence number the
        statement starts at; the question's walk is served from it when its own read is
        the same and the memory has not moved (:class:`Described`)."""
        statement = _with_described(
            [cypher.load("described_read_start")], "described_read_return", ahead
        )
        (row,) = self._read_text(
            "described",
            statement,
            as_of=described.as_of,
            max_subjects=described.max_subjects,
            described_limit=described.limit,
        )
        return _described(described, row)

    def _vocabulary_read(
        self,
        keys: Sequence[str],
        limit: int = MAX_CANDIDATES,
        described: DescribedAsk | None = None,
    ) -> Vocabulary:
        """The vocabulary read on the server, in one round trip, with ``described`` read
        in it (see :meth:`_described_read`)."""
        terms = _terms(self._tag, keys)
        if not terms:  # (no word to look up: nothing is read ahead either)
            (row,) = self._read("memory_info")
            self._known_predicates = sorted(row["predicates"])
            return Vocabulary([], list(self._known_predicates), frozenset(row["multi"]))
        ahead = [check_predicate(p) for p in described.predicates] if described else []
        said_keys = sorted({k for k in keys if k})[:MAX_TERMS]
        params: dict[str, Any] = {
            "query": " OR ".join(terms),
            "limit": limit,
            "said_terms": [{"key": k, "query": f"{self._tag}_{k}"} for k in said_keys],
            "said_max": SAID_POSTING,
        }
        if described is not None and ahead:
            statement = _with_described(
                [cypher.load("vocabulary_words"), cypher.load("described_ahead_start")],
                "described_ahead_return",
                ahead,
            )
            params |= {
                "as_of": described.as_of,
                "max_subjects": described.max_subjects,
                "described_limit": described.limit,
            }
        else:
            statement = cypher.load("vocabulary_words") + "\n" + cypher.load("vocabulary_return")
        (row,) = self._read_text("vocabulary", statement, **params)
        self._known_predicates = sorted(row["predicates"])
        read_ahead = None
        if described is not None and ahead:
            read_ahead = _described(described, row)
        hits = [EntityHit(h["name"], tuple(h["aliases"] or ())) for h in row["hits"]]
        said: dict[str, list[str]] = {}
        aliases: dict[str, tuple[str, ...]] = {}
        for found in row["said"]:
            said[found["key"]] = [n["name"] for n in found["nodes"]]
            for n in found["nodes"]:
                aliases[n["name"]] = tuple(n["aliases"] or ())
        return Vocabulary(
            with_said(hits, said, aliases),
            list(self._known_predicates),
            frozenset(row["multi"]),
            read_ahead,
        )

    def known_predicates(self) -> list[str] | None:
        """See :meth:`Store.known_predicates`; where the names are kept in process, the
        copy's, read whole here when the connection has none yet (the read its first
        question's vocabulary makes anyway): so that question's described relations are
        read ahead, and their subjects' slots with its neighbourhood, too."""
        if self._names_kept():
            return list(self._names.predicates)
        found = self._known_predicates
        return None if found is None else list(found)

    def find_entities(self, keys: Sequence[str], limit: int = MAX_CANDIDATES) -> list[EntityHit]:
        """The entities ``keys`` find now: the names kept in process, brought up to date
        first (one round trip), or read on the server."""
        if not self._names_kept():
            return self._vocabulary_read(keys, limit).hits
        row = self._names_since()
        self._take_names(row["memory"], row["changed"])
        if self._names_off:
            return self._vocabulary_read(keys, limit).hits
        return self._names.vocabulary(keys, limit)[0].hits

    def aliases(self) -> dict[str, tuple[str, ...]]:
        return {r["name"]: tuple(r["aliases"]) for r in self._read("aliases")}

    def predicates(self) -> list[str]:
        (row,) = self._read("memory_info")
        return sorted(row["predicates"])

    def predicate_uses(self, limit: int) -> list[PredicateUse]:
        (row,) = self._read("predicate_counts")
        # (a fact a clear deleted while this read ran comes back with no type: left out)
        counts = {p: 0 for p in row["predicates"]} | {
            c["p"]: c["n"] for c in row["counts"] if c["p"] is not None
        }
        top = most_used((PredicateUse(p, n, None) for p, n in counts.items()), limit)
        shown = [u.predicate for u in top if u.current]
        examples: dict[str, Fact] = {}
        if shown:
            # One statement; each type written in so its part starts from the type scan.
            statement = "\nUNION ALL\n".join(
                cypher.with_type("predicate_example", p) for p in shown
            )
            rows = self._read_text("predicate_example", statement)
            examples = {f.predicate: f for f in _live(rows)}
        return [PredicateUse(u.predicate, u.current, examples.get(u.predicate)) for u in top]

    def facts_of(
        self,
        entities: Sequence[str],
        *,
        as_of: int | None = None,
        history: bool = False,
        limit: int = MAX_NEIGHBOURS,
        predicates: Sequence[str] | None = None,
        at: int | None = None,
    ) -> list[Fact]:
        """See :meth:`Store.facts_of`; ``at`` reads the memory as it stood at that
        sequence number (one question's reads: see :mod:`.neighbourhood`)."""
        if not entities or (predicates is not None and not predicates):
            return []
        statement = (
            cypher.load("facts_of")
            if predicates is None
            else cypher.with_types("facts_of", sorted({check_predicate(p) for p in predicates}))
        )
        rows = self._read_settled(
            "facts_of",
            statement,
            names=list(dict.fromkeys(entities)),
            as_of=as_of,
            history=history,
            limit=limit,
            at=at,
        )
        return _live(rows)

    def facts_with_predicate(
        self, predicate: str, *, as_of: int | None = None, limit: int = MAX_NEIGHBOURS
    ) -> list[Fact]:
        rows = self._read(
            "facts_with_predicate", predicate=check_predicate(predicate), as_of=as_of, limit=limit
        )
        return _live(rows)

    def facts_of_few_subjects(
        self,
        predicates: Sequence[str],
        *,
        max_subjects: int,
        as_of: int | None = None,
        limit: int = MAX_NEIGHBOURS,
        at: int | None = None,
    ) -> dict[str, list[Fact]]:
        wanted = list(dict.fromkeys(check_predicate(p) for p in predicates))
        out: dict[str, list[Fact]] = {p: [] for p in wanted}
        if wanted:
            # The relationship type is written into the text (a validated identifier):
            # a dynamic type $(...) cannot use the type scan, and reads every fact.
            # (in one order whatever the question's, so that a server plans each set of
            # relations once)
            statement = "\nUNION ALL\n".join(
                cypher.with_type("facts_of_few_subjects", p) for p in sorted(wanted)
            )
            for r in self._read_text(
                "facts_of_few_subjects",
                statement,
                max_subjects=max_subjects,
                as_of=as_of,
                limit=limit,
                at=at,
            ):
                if r["seq"] is not None:  # (see _live)
                    out[r["p"]].append(_fact(r))
        return out

    def neighbourhood(self, plan: Plan) -> Neighbourhood:
        """The reads of ``plan`` in one round trip (``cypher/neighbourhood.cypher``).

        The described relations are not read here: a relationship type written into
        the statement made its text, and so its plan, one per combination of them, and
        planning this statement costs 0.3-0.8 s (a server plans each new text). Its text
        is now the same for every question; the described relations are read before
        it (:meth:`_described_read`, kept while the memory stands still), or, when that
        read does not decide the walk's (the memory moved, or another relation is
        wanted), by ``facts_of_few_subjects`` pinned to the same state through the view.

        The same statement returns the names changed since this client's copy of them
        (``names_changed.cypher``), which are taken in; when they change what the
        question's words found, :class:`VocabularyMoved` is raised, and the read kept
        for the question's second reading, which is served from it when it walks the
        same way."""
        ahead = getattr(self._local, "ahead", None)
        self._local.ahead = None
        if ahead is not None and ahead[:2] == (plan, self._names.seen):
            # Read again after VocabularyMoved, and walked the same way: the read made
            # then, at the state the names were brought to, serves it.
            self._local.served = None
            return ahead[2]  # type: ignore[no-any-return]
        kept = self._names_kept()
        statement = "\n".join(
            [
                cypher.load("neighbourhood"),
                cypher.load("neighbourhood_return").replace(
                    "NAMES_CHANGED", cypher.load("names_changed")
                ),
            ]
        )
        (row,) = self._read_text(
            "neighbourhood",
            statement,
            since=self._names.since if kept else _NO_COPY,
            changed_max=CHANGED_MAX,
            at=None,
            as_of=plan.as_of,
            names=list(dict.fromkeys(plan.anchors)),
            first_limit=plan.first_limit,
            later_limit=plan.later_limit,
            later_history=plan.later_history,
            hub_limit=plan.hub_limit,
            best=[check_predicate(p) for p in plan.best],
            relevance=dict(plan.relevance),
            ends=plan.ends,
            small=plan.small,
            hub_degree=plan.hub_degree,
            walked=list(plan.walked),
            relevance_of={a: dict(r) for a, r in plan.relevance_of.items()},
            shapes=plan.shapes,
            paths=plan.paths,
            frontier=plan.frontier,
            budget=plan.budget,
        )
        self._at = row["at"]
        # (a fact a clear deleted while this read ran shows no properties: left out)
        facts = {f.seq: f for f in itertools.starmap(Fact, row["facts"]) if f.seq is not None}

        def read(
            seqs: list[int], history: bool, limit: int, only: Sequence[str] | None
        ) -> EntityRead:
            return EntityRead(
                history,
                limit,
                None if only is None else frozenset(only),
                tuple(sorted((facts[s] for s in seqs if s in facts), key=lambda f: -f.seq)),
            )

        found = Neighbourhood(row["at"], plan.as_of)
        for g in row["first"]:
            found.add(g["key"], read(g["seqs"], True, plan.first_limit, None))
            if g["wanted"]:  # (a hub's relations its read holds none of)
                found.add(g["key"], read(g["crowd"], True, plan.first_limit, g["wanted"]))
        for g in row["old"]:
            found.add(g["key"], read(g["seqs"], False, plan.later_limit, None))
        for g in row["second"]:
            found.add(g["key"], read(g["seqs"], plan.later_history, plan.later_limit, None))
            if g["read"]:
                found.add(g["key"], read(g["hub"], False, plan.hub_limit, plan.best))
            if g["past"]:
                found.add(g["key"], read(g["past"], True, plan.hub_limit, None))
        for g in row["third"]:
            # (with history, a slot's past may be asked: every relation is read)
            only = None if plan.later_history else plan.best
            found.add(g["key"], read(g["seqs"], plan.later_history, plan.hub_limit, only))
            if g["cut"]:
                found.add(g["key"], read(g["hub"], False, plan.hub_limit, plan.best))
        if kept:
            try:
                self._check_served(row["memory"], row["changed"])
            except VocabularyMoved:
                self._local.ahead = (plan, self._names.seen, found)
                raise
        return found

    def current_of(self, subject: str, predicate: str | None = None) -> list[Fact]:
        predicate = check_slot(subject, predicate)
        rows = self._read_settled(
            "current_of", cypher.load("current_of"), subject=subject, predicate=predicate, at=None
        )
        return _live(rows)

    def history(
        self, subject: str, predicate: str | None = None, *, limit: int | None = None
    ) -> list[Fact]:
        predicate = check_slot(subject, predicate, limit)
        rows = self._read_settled(
            "history",
            cypher.load("history"),
            subject=subject,
            predicate=predicate,
            limit=limit,
            at=None,
        )
        return _live(rows)

    def all_facts(self) -> Iterator[Fact]:
        return iter(_live(self._read("all_facts")))

    def stats(self) -> dict[str, int]:
        (row,) = self._read("stats")
        return {k: row[k] for k in ("facts", "current_facts", "entities", "predicates", "last_seq")}

    def holds_memory(self) -> bool:
        """Whether anything was ever written to this namespace (and not cleared)."""
        (row,) = self._read("holds_memory")
        return bool(row["held"])

    def namespaces(self) -> dict[str, dict[str, int]]:
        rows = self._read("namespaces")
        return {
            r["ns"]: {k: r[k] for k in ("facts", "current_facts", "entities", "last_seq")}
            for r in rows
        }


#: Reads of one pinned statement at most, after the first, until two agree.
SETTLE_READS = 3


def _met(row: Any) -> bool:
    """Whether a row of a pinned read is a fact made or closed by the last write
    up to the read's number (``since`` .. ``at``), which may still be being applied."""
    since, at = row["since"], row["at"]
    closed = row["valid_to"]
    return since <= row["valid_from"] <= at or (closed is not None and since <= closed <= at)


def _shape(rows: list[Any]) -> list[tuple[int, int | None, bool]]:
    return sorted((r["seq"], r["valid_to"], r["witness"]) for r in rows)


#: Lucene refuses queries of more than 1,024 clauses; a question never needs as many.
MAX_TERMS = 512


def _with_described(head: list[str], end: str, ahead: list[str]) -> str:
    """A statement that reads the described relations ``ahead`` (validated predicates),
    one ``described_ahead.cypher`` part each, after ``head``; ``end`` returns them as
    one list, in their order."""
    parts = [
        cypher.with_type("described_ahead", p).replace("described_n", f"described_{i}")
        for i, p in enumerate(ahead)
    ]
    ends = ", ".join(f"described_{i}" for i in range(len(ahead)))
    return "\n".join([*head, *parts, cypher.load(end).replace("DESCRIBED", f"[{ends}]")])


def _described(ask: DescribedAsk, row: Any) -> Described:
    """The described relations a statement of :func:`_with_described` returned."""
    return Described(
        ask,
        row["at"],
        {
            p: sorted(_live(found), key=lambda f: -f.seq)
            for p, found in zip(ask.predicates, row["described"], strict=True)
        },
    )


def _terms(tag: str, keys: Sequence[str]) -> list[str]:
    """Index terms for ``keys``, longest (most specific) first when they must be cut."""
    unique = sorted({k for k in keys if k}, key=lambda k: (-len(k), k))[:MAX_TERMS]
    return sorted(f"{tag}_{k}" for k in unique)


class _ClearedUnder(Exception):
    """A write found no memory node once it held the lock: a clear deleted it while the
    write waited. Nothing was written; run again, the write starts the namespace afresh."""


def _cleared_under(e: Exception) -> bool:
    """Whether the server refused a write because a clear deleted the memory node it had
    read before taking its lock: nothing of it applied, and run again it writes into
    the namespace the clear left (empty)."""
    return getattr(e, "code", "") == "Neo.ClientError.Statement.EntityNotFound"


def _never_sent(e: BaseException) -> bool:
    """Whether a statement failed before it could reach the server: no connection
    could be made or had. (Read from the driver's message, for want of a type; a
    message it does not recognise leaves the outcome unknown, which is safe.)"""
    from neo4j.exceptions import ConnectionAcquisitionTimeoutError, ServiceUnavailable

    if isinstance(e, ConnectionAcquisitionTimeoutError):
        return True
    return isinstance(e, ServiceUnavailable) and str(e).startswith("Couldn't connect")


def _reason(e: BaseException) -> str:
    """The driver's message, first line, without its resolver details."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    text = text.split(" (resolved to", 1)[0]
    return text.rstrip(".: ") or type(e).__name__

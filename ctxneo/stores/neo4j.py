"""The Neo4j store: the same contract over the official driver.

Facts are relationships typed by their predicate between ``:Entity`` nodes,
so the graph reads naturally in Neo4j Browser::

    (:Entity {ns: "default", name: "AuthModule"})-[:DEPENDS_ON {seq: 4, valid_from: 4,
        valid_to: null, speaker: "Agent_Implementer", turn_id: 9}]->(:Entity {name: "RateLimiter"})

Every statement lives in ``cypher/*.cypher`` (bar ``db.awaitIndexes``). A
write is one managed transaction (retried on transient errors) that takes the
namespace's write lock first. One fact is one statement (``remember_one``),
which applies the supersession rule in Cypher; a batch reads the current facts
of its keys, decides supersession in Python (the rule both stores share,
``stores.base.supersede``), then merges entities, closes and creates with
UNWIND and advances the counter. Reads are routed as reads, one round trip
per store question, on a session each thread keeps open. Several memories share a
server through namespaces: every node carries ``ns``, and clearing a memory
deletes only its own namespace.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ctxneo import cypher
from ctxneo.errors import StoreError, StoreUnavailable
from ctxneo.model import Fact, NewFact, check_name, check_predicate
from ctxneo.neo4j_uri import check_uri
from ctxneo.stores.base import (
    MAX_CANDIDATES,
    MAX_NEIGHBOURS,
    MAX_PATHS,
    EntityHit,
    Store,
    supersede,
)
from ctxneo.text import index_keys

_SCHEMA_RACE_CODES = (
    "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
    "Neo.ClientError.Schema.ConstraintAlreadyExists",
    "Neo.ClientError.Schema.IndexAlreadyExists",
)

HOW_TO_START = (
    "start one with `ctxneo neo4j start` (Neo4j from Maven jars, needs Java 17) or "
    "`docker compose up -d neo4j`, or point NEO4J_URI at a running server"
)


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
    )


@functools.lru_cache(maxsize=1024)
def namespace_tag(namespace: str) -> str:
    """The prefix of this namespace's stems in the full-text index."""
    return "n" + hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:12]


def search_text(namespace: str, *names: str) -> str:
    """What an entity's ``search`` property holds: its (and its aliases') stems, tagged."""
    return _tagged(namespace_tag(namespace), names)


def _tagged(tag: str, names: Sequence[str]) -> str:
    return " ".join(f"{tag}_{key}" for name in names for key in sorted(index_keys(name)))


class Neo4jStore(Store):
    """A memory in one namespace of a Neo4j database.

    The constructor only stores configuration; :meth:`connect` opens the
    driver, proves the server answers and creates the schema.
    """

    backend = "neo4j"

    def __init__(
        self,
        uri: str,
        *,
        user: str | None = "neo4j",
        password: str | None = None,
        database: str | None = None,
        namespace: str = "default",
        connection_timeout: float = 5.0,
    ) -> None:
        check_name(namespace, "namespace")
        self.uri = check_uri(uri)
        self.user = user
        self.password = password
        self.database = database
        self.namespace = namespace
        self.connection_timeout = connection_timeout
        # Stems are indexed as "<tag>_<stem>" so a full-text query meets only this namespace.
        self._tag = namespace_tag(namespace)
        self._driver: Any = None
        self._local = threading.local()
        self.reads = 0  # read round trips so far (each store question is one)

    # -- connection -------------------------------------------------------------

    def connect(self) -> Neo4jStore:
        """Open the driver, check the server answers, create the schema (idempotent).

        Raises:
            StoreUnavailable: nothing answers at the URI, or the credentials are refused.
        """
        import neo4j
        from neo4j.exceptions import AuthError, ConfigurationError, Neo4jError, ServiceUnavailable

        auth = (self.user or "neo4j", self.password) if self.password else None
        try:
            self._driver = neo4j.GraphDatabase.driver(
                self.uri,
                auth=auth,
                connection_timeout=self.connection_timeout,
                connection_acquisition_timeout=max(10.0, self.connection_timeout * 2),
                max_transaction_retry_time=15.0,
                notifications_min_severity="OFF",
            )
            self._driver.verify_connectivity()
        except (ServiceUnavailable, OSError) as e:
            self.close()
            raise StoreUnavailable(
                f"cannot reach Neo4j at {self.uri}: {_reason(e)}; {HOW_TO_START}"
            ) from e
        except AuthError as e:
            self.close()
            raise StoreUnavailable(
                f"Neo4j at {self.uri} refused the credentials for user "
                f"{self.user!r}: set --user/--password or NEO4J_USER/"
                "NEO4J_PASSWORD"
            ) from e
        except (ConfigurationError, ValueError) as e:
            self.close()
            raise StoreUnavailable(f"bad Neo4j URI {self.uri!r}: {e}") from e
        try:
            self._create_schema()
        except Neo4jError as e:
            self.close()
            raise StoreError(f"Neo4j at {self.uri}: cannot create the schema: {e.message}") from e
        return self

    def _create_schema(self) -> None:
        from neo4j.exceptions import ClientError

        with self._session() as session:
            for statement in cypher.statements("schema"):
                try:
                    session.run(statement).consume()
                except ClientError as e:
                    # Another client created the same rule between our check and ours.
                    if e.code not in _SCHEMA_RACE_CODES:
                        raise
            session.run("CALL db.awaitIndexes(120)").consume()

    def _session(self, **kwargs: Any) -> Any:
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
        if session is None or session.closed():
            session = self._session(default_access_mode=neo4j.READ_ACCESS)
            self._local.reader = session
        return session

    def close(self) -> None:
        if self._driver is not None:
            self._driver.close()  # closes every session's connection too
            self._driver = None
        self._local = threading.local()

    # -- running statements -------------------------------------------------------

    def _read(self, name: str, **params: Any) -> list[Any]:
        """One read round trip, routed to a reader (retried once if the connection dropped)."""
        from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired

        self.reads += 1
        query, values = cypher.load(name), {"ns": self.namespace, **params}
        for attempt in (1, 2):
            session = self._reader()
            try:
                return list(session.run(query, values))
            except (ServiceUnavailable, SessionExpired) as e:
                self._local.reader = None
                if attempt == 2:
                    raise StoreUnavailable(f"lost Neo4j at {self.uri}: {_reason(e)}") from e
            except Neo4jError as e:
                raise StoreError(f"Neo4j query {name!r} failed: {e.message}") from e
        raise AssertionError("unreachable")

    def _write(self, work: Any) -> Any:
        """Run ``work(tx)`` as one managed write transaction (retried when transient)."""
        from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired

        try:
            with self._session() as session:
                return session.execute_write(work)
        except (ServiceUnavailable, SessionExpired) as e:
            raise StoreUnavailable(f"lost Neo4j at {self.uri}: {_reason(e)}") from e
        except Neo4jError as e:
            raise StoreError(f"Neo4j write failed: {e.message}") from e

    def _tx(self, tx: Any, name: str, **params: Any) -> list[Any]:
        return list(tx.run(cypher.load(name), {"ns": self.namespace, **params}))

    def _search(self, name: str) -> str:
        return _tagged(self._tag, (name,))

    # -- writes -------------------------------------------------------------------

    def remember(self, fact: NewFact) -> Fact:
        """One fact in one statement: the common write, one round trip."""
        new = fact.checked()

        def work(tx: Any) -> Fact:
            (row,) = self._tx(
                tx,
                "remember_one",
                s=new.subject,
                p=new.predicate,
                o=new.object,
                s_search=self._search(new.subject),
                o_search=self._search(new.object),
                multi=new.multi,
                speaker=new.speaker,
                turn_id=new.turn_id,
                fact_id=new.fact_id,
            )
            return _fact(row)

        return self._write(work)

    def remember_many(self, facts: Sequence[NewFact]) -> list[Fact]:
        checked = [f.checked() for f in facts]
        if not checked:
            return []

        def work(tx: Any) -> list[Fact]:
            (state,) = self._tx(tx, "lock_memory")
            seq, multi, predicates = state["seq"], set(state["multi"]), set(state["predicates"])
            keys = sorted({(f.subject, f.predicate) for f in checked})
            current: dict[tuple[str, str], list[Fact]] = {}
            for row in self._tx(tx, "current_of_keys", keys=[{"s": s, "p": p} for s, p in keys]):
                current.setdefault((row["s"], row["p"]), []).append(_fact(row))
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
                seq += 1
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
                )
                live.append(fact)
                created[seq] = fact
                predicates.add(new.predicate)
                out.append(fact)
            if closes:
                self._tx(tx, "close_facts", closes=closes)
            if created:
                names = {n for f in created.values() for n in (f.subject, f.object)}
                self._tx(
                    tx,
                    "merge_entities",
                    entities=[{"name": n, "search": self._search(n)} for n in sorted(names)],
                )
                self._tx(tx, "create_facts", facts=[f.to_dict() for f in created.values()])
            self._tx(tx, "set_memory", seq=seq, multi=sorted(multi), predicates=sorted(predicates))
            # Every fact as it now stands, closed later in this batch or not.
            return [latest.get(f.seq, f) for f in out]

        return self._write(work)

    def retract(self, subject: str, predicate: str, obj: str | None = None) -> list[Fact]:
        check_predicate(predicate)

        def work(tx: Any) -> list[Fact]:
            (state,) = self._tx(tx, "lock_memory")
            live = [
                _fact(r)
                for r in self._tx(tx, "current_of_keys", keys=[{"s": subject, "p": predicate}])
            ]
            live = sorted((f for f in live if obj is None or f.object == obj), key=lambda f: f.seq)
            if not live:
                return []
            at = state["seq"] + 1
            self._tx(
                tx,
                "close_facts",
                closes=[{"s": f.subject, "p": f.predicate, "seq": f.seq, "at": at} for f in live],
            )
            self._tx(tx, "set_memory", seq=at, multi=state["multi"], predicates=state["predicates"])
            return [f.closed_at(at) for f in live]

        return self._write(work)

    def declare_multi_valued(self, predicates: Iterable[str]) -> None:
        wanted = {check_predicate(p) for p in predicates}

        def work(tx: Any) -> None:
            (state,) = self._tx(tx, "lock_memory")
            self._tx(
                tx,
                "set_memory",
                seq=state["seq"],
                multi=sorted(set(state["multi"]) | wanted),
                predicates=state["predicates"],
            )

        self._write(work)

    def multi_valued(self) -> frozenset[str]:
        (row,) = self._read("memory_info")
        return frozenset(row["multi"])

    def add_alias(self, phrase: str, entity: str) -> None:
        check_name(phrase, "alias phrase")
        check_name(entity, "entity")

        def work(tx: Any) -> None:
            self._tx(tx, "lock_memory")  # like every write, under the namespace lock
            self._tx(
                tx,
                "add_alias",
                entity=entity,
                phrase=phrase,
                entity_search=self._search(entity),
                phrase_search=self._search(phrase),
            )

        self._write(work)

    def execute(self, statements: Iterable[str], progress: Any = lambda: None) -> int:
        """Run Cypher statements in order, each in its own managed write transaction.

        For ``ctxneo load`` and ``export --to-uri``: the statements are a script,
        not this store's questions. Returns how many ran.

        Raises:
            StoreError: a statement failed (the ones before it stay applied).
        """
        from neo4j.exceptions import ClientError

        count = 0
        for statement in statements:
            try:
                self._write(lambda tx, q=statement: tx.run(q).consume())
            except StoreError as e:
                cause = e.__cause__
                if not (isinstance(cause, ClientError) and cause.code in _SCHEMA_RACE_CODES):
                    raise StoreError(f"statement {count + 1} failed: {e}") from cause
            count += 1
            progress()
        self._write(lambda tx: None)  # a no-op write makes sure the last one is visible
        with self._session() as session:
            session.run("CALL db.awaitIndexes(120)").consume()
        return count

    def clear(self) -> None:
        from neo4j.exceptions import Neo4jError

        try:
            with self._session() as session:  # CALL ... IN TRANSACTIONS needs an auto-commit run
                session.run(cypher.load("clear"), {"ns": self.namespace}).consume()
                session.run(cypher.load("clear_memory_node"), {"ns": self.namespace}).consume()
        except Neo4jError as e:
            raise StoreError(f"cannot clear namespace {self.namespace!r}: {e.message}") from e

    # -- reads --------------------------------------------------------------------

    def vocabulary(
        self, keys: Sequence[str], limit: int = MAX_CANDIDATES
    ) -> tuple[list[EntityHit], list[str]]:
        terms = _terms(self._tag, keys)
        if not terms:
            return [], self.predicates()
        (row,) = self._read("vocabulary", query=" OR ".join(terms), limit=limit)
        hits = [EntityHit(h["name"], tuple(h["aliases"] or ())) for h in row["hits"]]
        return hits, sorted(row["predicates"])

    def find_entities(self, keys: Sequence[str], limit: int = MAX_CANDIDATES) -> list[EntityHit]:
        terms = _terms(self._tag, keys)
        if not terms:
            return []
        rows = self._read("find_entities", query=" OR ".join(terms), limit=limit)
        return [EntityHit(r["name"], tuple(r["aliases"] or ())) for r in rows]

    def aliases(self) -> dict[str, tuple[str, ...]]:
        return {r["name"]: tuple(r["aliases"]) for r in self._read("aliases")}

    def predicates(self) -> list[str]:
        (row,) = self._read("memory_info")
        return sorted(row["predicates"])

    def facts_of(
        self,
        entities: Sequence[str],
        *,
        as_of: int | None = None,
        history: bool = False,
        limit: int = MAX_NEIGHBOURS,
    ) -> list[Fact]:
        if not entities:
            return []
        rows = self._read(
            "facts_of",
            names=list(dict.fromkeys(entities)),
            as_of=as_of,
            history=history,
            limit=limit,
        )
        return [_fact(r) for r in rows]

    def two_hop(
        self,
        entities: Sequence[str],
        *,
        through: Sequence[str] | None = None,
        as_of: int | None = None,
        limit: int = MAX_PATHS,
    ) -> list[tuple[Fact, Fact]]:
        if not entities or (through is not None and not through):
            return []
        rows = self._read(
            "two_hop",
            names=list(dict.fromkeys(entities)),
            through=None if through is None else sorted(set(through)),
            as_of=as_of,
            limit=limit,
        )
        return [(_fact(r, "1"), _fact(r, "2")) for r in rows]

    def facts_with_predicate(
        self, predicate: str, *, as_of: int | None = None, limit: int = MAX_NEIGHBOURS
    ) -> list[Fact]:
        rows = self._read(
            "facts_with_predicate", predicate=check_predicate(predicate), as_of=as_of, limit=limit
        )
        return [_fact(r) for r in rows]

    def history(self, subject: str, predicate: str | None = None) -> list[Fact]:
        return [_fact(r) for r in self._read("history", subject=subject, predicate=predicate)]

    def all_facts(self) -> Iterator[Fact]:
        return iter([_fact(r) for r in self._read("all_facts")])

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


#: Lucene refuses queries of more than 1,024 clauses; a question never needs as many.
MAX_TERMS = 512


def _terms(tag: str, keys: Sequence[str]) -> list[str]:
    """Index terms for ``keys``, longest (most specific) first when they must be cut."""
    unique = sorted({k for k in keys if k}, key=lambda k: (-len(k), k))[:MAX_TERMS]
    return sorted(f"{tag}_{k}" for k in unique)


def _reason(e: BaseException) -> str:
    """The driver's message, first line, without its resolver details."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    text = text.split(" (resolved to", 1)[0]
    return text.rstrip(".: ") or type(e).__name__

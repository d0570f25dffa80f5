// The current facts of each predicate in this namespace (every current fact is
// counted, as stats counts them), and every predicate the namespace has seen.
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
CALL {
  MATCH (s:Entity {ns: $ns})-[r]->()
  WHERE r.valid_to IS NULL
  WITH type(r) AS p, count(*) AS n
  RETURN collect({p: p, n: n}) AS counts
}
RETURN counts, coalesce(m.predicates, []) AS predicates

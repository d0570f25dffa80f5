// Create facts, merging both entities on the constrained (ns, name) key.
// The relationship type is the fact's predicate (validated before it gets here).
UNWIND $facts AS f
MERGE (s:Entity {ns: $ns, name: f.s})
  ON CREATE SET s.search = f.s_search, s.aliases = []
MERGE (o:Entity {ns: $ns, name: f.o})
  ON CREATE SET o.search = f.o_search, o.aliases = []
CREATE (s)-[r:$(f.p)]->(o)
SET r.seq = f.seq, r.valid_from = f.valid_from, r.valid_to = f.valid_to,
    r.speaker = f.speaker, r.turn_id = f.turn_id, r.fact_id = f.fact_id

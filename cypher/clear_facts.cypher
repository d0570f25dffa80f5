// Delete one namespace's facts, in batches of relationships, before its entities
// (clear.cypher): a node's DETACH DELETE takes every relationship of the node into
// one transaction, and a hub's 100,000 ran the local 768 MB server out of memory.
MATCH (:Entity {ns: $ns})-[r]->()
CALL {
  WITH r
  DELETE r
} IN TRANSACTIONS OF 10000 ROWS

// Delete one namespace, in batches so a large memory does not need one huge transaction.
MATCH (e:Entity {ns: $ns})
CALL {
  WITH e
  DETACH DELETE e
} IN TRANSACTIONS OF 5000 ROWS

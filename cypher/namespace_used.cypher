// Whether any entity is in this namespace (a load goes only into an empty one).
OPTIONAL MATCH (e:Entity {ns: $ns})
WITH e LIMIT 1
RETURN e IS NOT NULL AS used

// Register another name for an entity and index its stems.
MERGE (e:Entity {ns: $ns, name: $entity})
  ON CREATE SET e.search = $entity_search, e.aliases = []
WITH e
WHERE NOT $phrase IN e.aliases
SET e.aliases = e.aliases + $phrase, e.search = e.search + ' ' + $phrase_search

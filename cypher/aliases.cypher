// Every entity of the namespace that has aliases, sorted by name.
MATCH (e:Entity {ns: $ns})
WHERE size(e.aliases) > 0
RETURN e.name AS name, e.aliases AS aliases
ORDER BY name

// Entities whose name or alias stems match any key: a full-text index lookup.
// Every stem is stored prefixed with the namespace's tag, so the query only
// meets this namespace's entities.
CALL db.index.fulltext.queryNodes('ctxneo_entity_search', $query, {limit: $limit})
YIELD node
WHERE node.ns = $ns
RETURN node.name AS name, node.aliases AS aliases

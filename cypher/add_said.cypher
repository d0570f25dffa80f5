// The words a batch's new facts were said in, added to the entities they name (found by
// the element ids merge_current returned; the first $said_cap kept), and the index text
// built from them, stamped with the write's names counter (see names_changed.cypher).
UNWIND $entities AS e
MATCH (n) WHERE elementId(n) = e.id
SET n.said = (coalesce(n.said, []) + [x IN e.said WHERE NOT x IN coalesce(n.said, [])])[..$said_cap]
SET n.said_search = reduce(acc = '', x IN n.said | acc + ' ' + $tag + '_' + x),
    n.changed = $names

// Whether a namespace holds anything: its memory node (made by every write), or
// entities without one (a load that stopped half-way).
RETURN EXISTS { MATCH (:CtxneoMemory {ns: $ns}) } OR EXISTS { MATCH (:Entity {ns: $ns}) } AS held

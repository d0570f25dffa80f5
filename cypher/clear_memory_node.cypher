MATCH (m:CtxneoMemory {ns: $ns}) DELETE m

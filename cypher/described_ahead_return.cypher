// The end of a vocabulary read with its described relations ahead: `DESCRIBED` is the
// list of the parts' `described_n`, in the order of the relations asked.
RETURN hits, said, coalesce(m.predicates, []) AS predicates, coalesce(m.multi, []) AS multi,
  at, DESCRIBED AS described

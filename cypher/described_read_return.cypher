// The end of a described read (described_read_start.cypher): `DESCRIBED` is the list of
// the parts' `described_n`, in the order of the relations asked.
RETURN at, DESCRIBED AS described

// One part of neighbourhood.cypher per relation the question names best (the
// relationship type written in by with_type, `d_N` renamed per part): the newest
// $described_limit current facts of the relation when it holds for at most
// $max_subjects subjects, none when for more (the meaning of facts_of_few_subjects).
CALL (seen) {
  CALL (seen) {
    MATCH (s)-[r:`TYPE`]->()
    WHERE s.ns = $ns AND r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen)
    WITH DISTINCT s LIMIT $max_subjects + 1
    RETURN collect(s) AS subjects
  }
  CALL (subjects, seen) {
    UNWIND CASE WHEN size(subjects) <= $max_subjects THEN subjects ELSE [] END AS s
    MATCH (s)-[r:`TYPE`]->()
    WHERE r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen)
    WITH r ORDER BY r.seq DESC LIMIT $described_limit
    RETURN collect(r) AS rs
  }
  RETURN rs AS d_N
}

// One relation's part of a vocabulary read ahead (one per relation, each its own
// `described_n`): exactly facts_of_few_subjects.cypher for the relationship type written
// in by with_type, as one list, empty when the relation holds for more than
// $max_subjects subjects. (Collected, never grouped: a part that found nothing must
// still leave the vocabulary's one row.)
CALL (at, seen) {
  CALL (seen) {
    MATCH (s)-[r:`TYPE`]->() USING SCAN r:`TYPE`
    WHERE s.ns = $ns AND r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen)
    WITH DISTINCT s LIMIT $max_subjects + 1
    RETURN collect(s) AS subjects
  }
  UNWIND CASE WHEN size(subjects) <= $max_subjects THEN subjects ELSE [] END AS s
  MATCH (s)-[r:`TYPE`]->(o)
  WHERE r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen)
  WITH s, r, o, at ORDER BY r.seq DESC LIMIT $described_limit
  RETURN collect({
    s: s.name, p: type(r), o: o.name, seq: r.seq, valid_from: r.valid_from,
    valid_to: CASE WHEN r.valid_to > at THEN null ELSE r.valid_to END,
    speaker: r.speaker, turn_id: r.turn_id, fact_id: r.fact_id, text: r.text
  }) AS described_n
}

"""The two flat baselines the context graph is measured against.

Both get every turn (facts, distractors and earlier questions) as it was
spoken; neither is handicapped: the raw dump answers with the transcript line
that best overlaps the question (stems, not surface words), the RAG with the
most similar chunk, and both skip lines that are themselves questions, which
no reader would take for an answer.
"""

from __future__ import annotations

from ctxneo.bench.tokens import estimate_tokens

from ctxneo.model import UNKNOWN, Turn
from ctxneo.text import tokens


def transcript_line(turn: Turn) -> str:
    """A turn as it appears in a transcript: ``speaker: text``."""
    return f"{turn.speaker}: {turn.text}"


def _is_question(turn: Turn) -> bool:
    return turn.turn_type == "query" or turn.text.rstrip().endswith("?")


class RawHistoryDump:
    """Every turn appended verbatim; the whole transcript is every query's context."""

    name = "raw"

    def __init__(self) -> None:
        self.turns: list[Turn] = []

    def ingest(self, turn: Turn) -> None:
        self.turns.append(turn)

    def context(self, question: str, k: int, budget: int | None = None) -> tuple[str, list[str]]:
        """The context sent at any ``k`` and the transcript lines it holds: everything, or
        within ``budget`` tokens the newest lines that fit."""
        lines = [transcript_line(t) for t in self.turns]
        if budget is not None:
            kept: list[str] = []
            for line in reversed(lines):
                if estimate_tokens("\n".join([line, *kept, f"Q: {question}"])) > budget:
                    break
                kept.insert(0, line)
            lines = kept
        return "\n".join([*lines, f"Q: {question}"]), lines

    def answer(self, question: str) -> tuple[str, str, list[str]]:
        """Return (answer, context, evidence lines)."""
        context, _ = self.context(question, 0, None)
        wanted = {t.stem for t in tokens(question) if not t.stop}
        best: tuple[int, Turn] | None = None
        # Newest first, so on equal overlap the most recent statement wins.
        for turn in reversed(self.turns):
            if _is_question(turn):
                continue
            overlap = len(wanted & {t.stem for t in tokens(turn.text) if not t.stop})
            if overlap and (best is None or overlap > best[0]):
                best = (overlap, turn)
        if best is None:
            return UNKNOWN, context, []
        return transcript_line(best[1]), context, [transcript_line(best[1])]


class VectorRAG:
    """Every turn a chunk; TF-IDF cosine similarity; the top ``k`` chunks are the context."""

    name = "rag"

    def __init__(self, top_k: int = 3) -> None:
        self.top_k = top_k
        self.turns: list[Turn] = []
        # The last ranking, so that contexts at several k cost one TF-IDF fit.
        self._ranked: tuple[str, int, list[str]] | None = None

    def ingest(self, turn: Turn) -> None:
        self.turns.append(turn)

    def _ranking(self, question: str) -> list[str]:
        if self._ranked and self._ranked[:2] == (question, len(self.turns)):
            return self._ranked[2]
        # Imported here: scikit-learn takes seconds to import, and every ctxneo
        # command (an MCP server start included) loads this module.
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.metrics.pairwise import cosine_similarity

        chunks = [transcript_line(t) for t in self.turns if not _is_question(t)]
        ranked: list[str] = []
        if chunks:
            try:
                matrix = TfidfVectorizer().fit_transform([*chunks, question])
            except ValueError:  # only stop words everywhere: nothing to match on
                matrix = None
            if matrix is not None:
                sims = cosine_similarity(matrix[-1], matrix[:-1]).flatten()
                order = sorted(range(len(chunks)), key=lambda i: (-sims[i], -i))
                ranked = [chunks[i] for i in order if sims[i] > 0]
        self._ranked = (question, len(self.turns), ranked)
        return ranked

    def retrieve(self, question: str, k: int | None = None) -> list[str]:
        """The ``k`` (default ``top_k``) chunks most similar to the question, best first."""
        return self._ranking(question)[: self.top_k if k is None else k]

    def context(self, question: str, k: int, budget: int | None = None) -> tuple[str, list[str]]:
        """The context with the top ``k`` chunks (those that fit ``budget`` tokens), and
        those chunks."""
        top = self.retrieve(question, k)
        if budget is not None:
            kept: list[str] = []
            for chunk in top:
                if estimate_tokens("\n".join([f"Q: {question}", *kept, chunk])) > budget:
                    break
                kept.append(chunk)
            top = kept
        return "\n".join([f"Q: {question}", *top]), top

    def answer(self, question: str) -> tuple[str, str, list[str]]:
        context, top = self.context(question, self.top_k)
        return (top[0] if top else UNKNOWN), context, top

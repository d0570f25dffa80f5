"""The token estimate every context is measured with."""

from __future__ import annotations


def estimate_tokens(text: str) -> int:
    """``max(words, round(chars / 4))``: one estimate for every architecture and budget.

    No tokenizer download (tiktoken fetches its ranks over the network); the
    same rule for everyone, so it cannot tilt a comparison.
    """
    return max(len(text.split()), round(len(text) / 4))

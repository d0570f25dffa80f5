"""The token estimate every architecture is charged with."""

from __future__ import annotations


def estimate_tokens(text: str) -> int:
    """``max(words, round(chars / 4))``: one estimate for all three architectures.

    No tokenizer download (tiktoken fetches its ranks over the network); the
    same rule for everyone, so it cannot tilt the comparison.
    """
    return max(len(text.split()), round(len(text) / 4))

"""Chunks, the fifth stage: sections of the heading tree cut into token-bounded, verbatim chunks.

Modules: :mod:`.sections` (which blocks each section owns), :mod:`.cuts` (where a section's
text may be cut and at what cost), :mod:`.chunker` (:func:`chunk_document`: the rules, ids and
overlap).
"""

from __future__ import annotations

from .chunker import DEFAULT_MAX_TOKENS, chunk_document
from .sections import Section, sections

__all__ = ["Section", "sections", "chunk_document", "DEFAULT_MAX_TOKENS"]

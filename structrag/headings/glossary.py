"""A glossary's terms are entries of the glossary, not sections of the document.

Under a title naming a glossary ("Glossary of Terms and Acronyms", "Financial glossary", "Definitions",
"Abbreviations"), each defined term is set in bold or on a line of its own above its definition and reads
as a sub-heading ("Combined LTV ratio", "IASB"). The annotators of ``eval/data/heading_precision_labels.md``
judge them body text, and authors' outlines never list them: a chunk per term would cut the glossary into
fragments.
"""

from __future__ import annotations

import re
from typing import Sequence

from ..model import Heading
from ._geometry import prominence

__all__ = ["glossary_terms"]

#: a title naming a glossary, whole (a section "Definitions of Non-GAAP Measures" discusses, it lists nothing)
_GLOSSARY = re.compile(r"^(?:(?:financial|technical)\s+)?(?:glossary(?:\s+of\s+(?:terms|acronyms)[\w\s,&]{0,40})?"
                       r"|definitions|abbreviations(?:\s+and\s+acronyms)?|acronyms(?:\s+and\s+abbreviations)?"
                       r"|list\s+of\s+(?:abbreviations|acronyms))\s*:?$", re.I)


def glossary_terms(headings: Sequence[Heading]) -> set[int]:
    """Positions in ``headings`` of the layout headings that are a glossary's terms: after a glossary's
    title, less prominent than it, up to the next heading that is not (as prominent, numbered, or an entry of
    the printed contents, which lists sections, not terms)."""
    out: set[int] = set()
    k = 0
    while k < len(headings):
        title = headings[k]
        k += 1
        if not _GLOSSARY.match(" ".join(title.text.split())):
            continue
        top = prominence(title.size, title.bold, title.text)
        while k < len(headings):
            h = headings[k]
            if h.source != "layout" or h.numbering is not None or prominence(h.size, h.bold, h.text) >= top:
                break
            out.add(k)
            k += 1
    return out

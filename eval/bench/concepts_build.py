"""Build the packaged concept vocabulary ``retrievers/rank/data/concepts.json``.

    python -m eval.bench.concepts_build [--wheel edgartools-5.62.1-py3-none-any.whl]

Sources, merged in this order:

1. **US-GAAP element → standard concept** mappings of the ``edgartools`` package
   (MIT licence; file ``edgar/xbrl/standardization/gaap_mappings.json`` inside its
   wheel): for each standard concept ("Capital Expenditures") its statement, its
   section ("Investing Activities") and the US-GAAP elements filers tag it with
   (``PaymentsToAcquirePropertyPlantAndEquipment``).  An element's name is the
   taxonomy's label with the spaces taken out, so split back into words it is the
   wording filers print ("payments to acquire property plant and equipment").  Only
   the elements used by at least ``--min-companies`` companies are kept, at most
   ``--per-concept`` per concept (the most used first), which keeps the file small.
2. **The reader-word layer** ``eval/data/concept_aliases.json``, written and reviewed
   for this project: how readers ask (capex, FCF, operating margin), extra filer
   wordings, derived metrics and the concepts they are computed from, Chinese
   statement line items, and statement titles.

The wheel is not a dependency: get it once with ``pip download --no-deps
edgartools==5.62.1`` (nothing is downloaded at run time; the output is committed).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from eval.bench.common import REPO

ALIASES = REPO / "eval" / "data" / "concept_aliases.json"
OUT = REPO / "retrievers" / "rank" / "data" / "concepts.json"
MEMBER = "edgar/xbrl/standardization/gaap_mappings.json"
VERSION = "2026.12.1"
#: standard concepts too generic to expand a question with (they match everything)
SKIP = re.compile(r"^(None|Other |Forecasted |Operating Lease Commitment, Year|Special Items|Profit or Loss$)")


def words(element: str) -> str:
    """``PaymentsToAcquirePropertyPlantAndEquipment`` -> ``payments to acquire property plant and equipment``."""
    name = element.split(":")[-1]
    parts = re.findall(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|\d+", name)
    return " ".join(p.lower() for p in parts)


def from_mappings(mappings: dict, *, min_companies: int, per_concept: int) -> dict[str, dict]:
    by_name: dict[str, list[tuple[int, str, dict]]] = {}
    for element, rec in mappings.items():
        name = rec.get("display_name")
        if not name or SKIP.match(name) or element.endswith("Abstract"):
            continue
        by_name.setdefault(name, []).append((int(rec.get("company_count") or 0), element, rec))
    out = {}
    for name, recs in sorted(by_name.items()):
        recs.sort(key=lambda r: (-r[0], r[1]))
        kept = [r for r in recs if r[0] >= min_companies][:per_concept] or recs[:1]
        top = kept[0][2]
        out[name] = {
            "statement": top.get("statement"),
            "section": top.get("section"),
            "labels": list(dict.fromkeys(words(e) for _, e, _ in kept)),
            "elements": [e for _, e, _ in kept],
            "aliases": [name.lower()],
        }
    return out


def build(mappings: dict, aliases: dict, *, min_companies: int, per_concept: int, source: str) -> dict:
    concepts = from_mappings(mappings, min_companies=min_companies, per_concept=per_concept)
    for name, extra in aliases["concepts"].items():
        if name not in concepts:
            raise SystemExit(f"{ALIASES}: concept {name!r} is not a standard concept of the mappings")
        c = concepts[name]
        c["aliases"] = list(dict.fromkeys(c["aliases"] + extra.get("aliases", [])))
        c["labels"] = list(dict.fromkeys(extra.get("labels", []) + c["labels"]))
    derived = {}
    for name, d in aliases["derived"].items():
        missing = [f for f in d.get("from", []) if f not in concepts]
        if missing:
            raise SystemExit(f"{ALIASES}: derived {name!r} is computed from unknown concepts {missing}")
        derived[name] = {"aliases": d["aliases"], "labels": d.get("labels", []), "from": d.get("from", [])}
    return {
        "format": "structrag-concepts/1",
        "version": VERSION,
        "sources": [
            {"what": "US-GAAP elements per standard concept, with statement and section", "from": source,
             "licence": "MIT (edgartools); element names from the US-GAAP taxonomy (FASB)",
             "filter": f"elements used by >= {min_companies} companies, at most {per_concept} per concept"},
            {"what": "reader aliases, derived metrics, Chinese line items, statement titles",
             "from": "eval/data/concept_aliases.json", "licence": "written for this project"},
        ],
        "concepts": concepts,
        "derived": derived,
        "zh": aliases["zh"],
        "statements": aliases["statements"],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.concepts_build", description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", default=None, help="edgartools wheel (default: pip download edgartools==5.62.1)")
    ap.add_argument("--min-companies", type=int, default=100)
    ap.add_argument("--per-concept", type=int, default=6)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = Path(args.wheel) if args.wheel else None
        if wheel is None:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "edgartools==5.62.1",
                            "-d", tmp], check=True)
            wheel = next(Path(tmp).glob("edgartools-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            mappings = json.loads(z.read(MEMBER))
    vocab = build(mappings, json.loads(ALIASES.read_text(encoding="utf-8")), min_companies=args.min_companies,
                  per_concept=args.per_concept, source=f"{wheel.name}:{MEMBER}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(vocab, ensure_ascii=False, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    n = len(vocab["concepts"])
    print(f"{out}: {n} concepts, {len(vocab['derived'])} derived, {len(vocab['zh'])} Chinese, "
          f"{sum(len(c['labels']) for c in vocab['concepts'].values())} labels, {out.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

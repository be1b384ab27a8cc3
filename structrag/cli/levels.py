"""CLI sub-commands of the level stage: ``levels`` and ``train-levels``.

``structrag levels REFERENCE.json --pdf PDF`` is the level-only entry point
(the level-only protocol): the headings are given, only their levels are predicted.
``structrag train-levels`` trains the learned predictor's LightGBM model on a
folder of PDFs with author-made outlines.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ReferenceFormatError
from ..options import ParseOptions
from .options import LEVEL_OPTIONS, add_level_arguments, add_option_arguments, level_options_from_args, report_fallback

__all__ = ["register", "read_reference_headings"]


def register(sub: Any) -> None:
    """Add ``levels`` and ``train-levels`` to the ``structrag`` sub-parsers."""
    p = sub.add_parser(
        "levels",
        help="predict levels for given headings (level-only protocol)",
        description="Read reference headings [{\"text\", \"page\", \"bbox\"}] (page 1-based, reading order) "
        "and print [{\"text\", \"page\", \"level\", \"source\", \"confidence\"}]. With --pdf, each heading "
        "takes its style from the extracted block under its bbox.",
    )
    p.add_argument("reference", help="JSON file: a list of {text, page, bbox} (or {\"headings\": [...]})")
    p.add_argument("--pdf", default=None, help="the PDF the headings are on (recommended: gives their style)")
    p.add_argument("--password", default=None, help="password of an encrypted PDF")
    p.add_argument("--output", "-o", default=None, help="write the JSON here instead of stdout")
    add_option_arguments(p, ParseOptions, title="levels", only=LEVEL_OPTIONS)
    add_level_arguments(p, stats_help="print the driver's accounting on stderr")
    p.set_defaults(func=_levels)

    t = sub.add_parser(
        "train-levels",
        help="train the learned level predictor",
        description="Train the LightGBM level model on PDFs with author-made outlines (a folder laid out "
        "like shared/data/headings: manifest.jsonl, <doc_id>.pdf, <doc_id>.toc.json). Writes the model in "
        "LightGBM's text format and a JSON metadata file beside it (seed, parameters, data sha1s).",
    )
    default_data = os.environ.get("STRUCTRAG_SHARED_DATA")
    t.add_argument("--data", default=str(Path(default_data) / "headings") if default_data else None,
                   help="a folder of reference documents (manifest.jsonl, <doc_id>.pdf, <doc_id>.toc.json; default: "
                   "$STRUCTRAG_SHARED_DATA/headings); optional with --also")
    t.add_argument("--out", default="levels.txt",
                   help="model file to write (default: ./levels.txt; the shipped model is "
                   "structrag/levels/models/levels.txt)")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--rounds", type=int, default=None, help="boosting rounds (default: the tuned value)")
    t.add_argument("--dagger-rounds", type=int, default=None,
                   help="rounds of training on the model's own states (default: the tuned value)")
    t.add_argument("--docs", nargs="*", default=None, metavar="DOC_ID", help="train on these documents only")
    t.add_argument("--exclude", nargs="*", default=(), metavar="DOC_ID", help="documents to leave out")
    t.add_argument("--also", nargs="*", default=(), metavar="PDF_OR_DIR",
                   help="more training documents: PDFs (or folders of PDFs) with their own bookmarks; those "
                   "with fewer than 8 entries or an editorial outline (under half its titles printed) are skipped; "
                   "and corrections files from 'structrag view' (*.corrections.json, beside their PDF), whose "
                   "corrected trees are taken as labels")
    t.add_argument("--cache", default=None, help="folder to cache extracted documents in")
    t.set_defaults(func=_train)


# ---------------------------------------------------------------------------


def read_reference_headings(path: str | os.PathLike[str]) -> list[dict]:
    """The reference file's heading records, checked; pages stay 1-based here."""
    from ..files import read_json

    p = Path(path)
    data = read_json(p, what="reference headings file", hint="a JSON list of {text, page, bbox}")
    if isinstance(data, dict) and isinstance(data.get("headings"), list):
        data = data["headings"]
    if not isinstance(data, list):
        raise ReferenceFormatError("expected a JSON list of {text, page, bbox}", path=p)
    out = []
    for i, rec in enumerate(data):
        where = f"heading {i + 1}"
        if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
            raise ReferenceFormatError(f"{where}: needs a \"text\" string", path=p)
        page = rec.get("page")
        if not isinstance(page, int) or isinstance(page, bool) or page < 1:
            raise ReferenceFormatError(f"{where}: \"page\" must be a 1-based integer, got {page!r}", path=p)
        bbox = rec.get("bbox")
        if bbox is not None and (not isinstance(bbox, list) or len(bbox) != 4
                                 or not all(isinstance(v, (int, float)) for v in bbox)):
            raise ReferenceFormatError(f"{where}: \"bbox\" must be [x0, y0, x1, y1] or null", path=p, page=page)
        _check_style(rec, where, p, page)
        out.append(rec)
    return out


def _check_style(rec: dict, where: str, path: Path, page: int) -> None:
    """The optional style fields have the types the level predictors read (no inf, no strings for numbers)."""
    def bad(field: str, want: str) -> ReferenceFormatError:
        return ReferenceFormatError(f"{where}: \"{field}\" must be {want}, got {rec[field]!r}", path=path, page=page)

    if "font" in rec and not isinstance(rec["font"], str):
        raise bad("font", "a font name string")
    if "size" in rec and (isinstance(rec["size"], bool) or not isinstance(rec["size"], (int, float))
                          or not math.isfinite(rec["size"]) or rec["size"] < 0):
        raise bad("size", "a font size in points (a finite number >= 0)")
    for flag in ("bold", "italic"):
        if flag in rec and not isinstance(rec[flag], bool):
            raise bad(flag, "true or false")
    if "color" in rec and (isinstance(rec["color"], bool) or not isinstance(rec["color"], int)
                           or not 0 <= rec["color"] <= 0xFFFFFF):
        raise bad("color", "an sRGB integer from 0 to 16777215")


def _levels(args: argparse.Namespace) -> int:
    from ..files import check_output_file
    from ..levels import assign_levels

    if args.output:
        check_output_file(args.output, flag="-o")  # before predicting: a folder given by mistake costs nothing
    records = read_reference_headings(args.reference)
    document = None
    if args.pdf:
        from ..extraction import extract

        document = extract(args.pdf, password=args.password, progress=False)
    from ..levels.references import headings_for_reference

    headings = headings_for_reference(records, document)
    opts = level_options_from_args(args)  # --level-model included
    result = assign_levels(document, headings, **opts)
    report_fallback(result.stats, str(args.reference))
    out = [
        {"text": rec["text"], "page": int(rec["page"]), "level": h.level, "source": h.level_source,
         "confidence": None if h.confidence is None else round(float(h.confidence), 4)}
        for rec, h in zip(records, result.headings)
    ]
    text = json.dumps(out, ensure_ascii=False, indent=2) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if args.stats:
        print(json.dumps(result.stats, indent=2, default=str), file=sys.stderr)
    return 0


def _train(args: argparse.Namespace) -> int:
    from ..files import check_output_file
    from ..levels.references import load_reference_docs
    from ..levels.training import DEFAULT_ROUNDS, DEFAULT_DAGGER_ROUNDS, train_model

    check_output_file(args.out, what="model file", flag="--out")  # before the training, not after
    if not args.data and not args.also:
        raise ConfigError("no training documents", hint="pass --also PDF_OR_DIR (PDFs with bookmarks, or corrections "
                          "files), and/or --data DIR (a folder laid out like shared/data/headings, or set "
                          "STRUCTRAG_SHARED_DATA)")
    refs = load_reference_docs(args.data, cache_dir=args.cache, progress=None, doc_ids=args.docs) if args.data else []
    excluded = set(args.exclude)
    unknown = excluded - {r.doc_id for r in refs}
    if unknown:
        raise ConfigError("unknown doc_id(s) in --exclude: " + ", ".join(sorted(unknown)))
    refs = [r for r in refs if r.doc_id not in excluded]
    if args.also:
        from ..corrections import reference_doc_from_corrections
        from ..levels.references import outline_reference_docs

        pdfs: list[Path] = []
        fixed: list[Path] = []  # corrections files from `structrag view`: their corrected trees are labels
        for a in args.also:
            p = Path(a)
            fixed.extend(sorted(p.glob("*.corrections.json")) if p.is_dir() else [p] if p.suffix == ".json" else [])
            pdfs.extend(sorted(p.glob("*.pdf")) if p.is_dir() else [] if p.suffix == ".json" else [p])
        refs += [r for r in (reference_doc_from_corrections(f, cache_dir=args.cache) for f in fixed)
                 if r.doc_id not in excluded]
        extra, skipped = outline_reference_docs(pdfs, cache_dir=args.cache, skip_sha1={r.pdf_sha1 for r in refs})
        for name, why in skipped:
            print(f"skipped {name}: {why}", file=sys.stderr)
        refs += [r for r in extra if r.doc_id not in excluded]
    if not refs:
        raise ConfigError("none of the documents given can train the level model",
                          hint="give PDFs whose bookmarks list at least 8 entries printed on their pages, or "
                          "corrections files from 'structrag view'")
    rounds = args.rounds if args.rounds is not None else DEFAULT_ROUNDS
    dagger = args.dagger_rounds if args.dagger_rounds is not None else DEFAULT_DAGGER_ROUNDS
    booster, meta = train_model(refs, seed=args.seed, rounds=rounds, dagger_rounds=dagger)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    booster.save_model(str(out))
    meta["command"] = "structrag train-levels " + " ".join(sys.argv[2:]) if sys.argv[1:2] == ["train-levels"] \
        else "structrag train-levels"
    out.with_suffix(".json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {out} ({meta['rows']} rows from {len(refs)} documents) and {out.with_suffix('.json')}",
          file=sys.stderr)
    return 0

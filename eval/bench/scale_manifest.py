"""Survey fetched snapshots for distractor reports and write ``eval/data/scale/manifest.jsonl`` (issue 48).

    nice python -m eval.bench.scale_manifest [--mirror /work/.mirror] [--work .cache/scale-survey]

Every PDF at the snapshot's HEAD of each repository in ``eval/data/scale/sources.json`` is read from git,
run past the held-out guard, opened with PyMuPDF and kept when it has >= 20 pages and a text layer.
Dropped: held-out files and issuers, copies of a shared-data PDF or of a corpus PDF, second copies (same
sha1, or same issuer + year + form, or same period for 10-Q / 8-K), and a report of the same issuer,
fiscal year and form as a shared retrieval document (a second copy would make that benchmark wrong).
Issuer, year and form are read from the first pages and the file's path (a best reading, may be null).
:mod:`eval.bench.scale_build` rebuilds the PDFs from the manifest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

from eval.bench.common import CACHE, REPO
from eval.bench.corpus_build import MANIFEST as CORPUS_MANIFEST
from eval.bench.corpus_labels import git_blob, git_dir, git_head
from eval.bench.corpus_manifest import slug
from eval.bench.corpus_survey import _pdf_entries, guard_held, shared_sha1s
from eval.bench.scale_build import MANIFEST

SOURCES = REPO / "eval" / "data" / "scale" / "sources.json"
SHARED = REPO.parent / "shared" / "data"
MIN_PAGES = 20
MIN_TEXT = 200  # characters on the first three pages: below it there is no usable text layer
SEC_FORMS = ("10-K", "10-Q", "8-K", "20-F", "40-F")
# one row per issuer, year and form for these: another file of the same filing is a near-duplicate
ONE_PER_YEAR = set(SEC_FORMS) | {"financial-statements", "proxy-statement"}
# test PDFs, encyclopaedia pages, essays and chunked fragments that some report repositories also hold
NOT_REPORTS = re.compile(r"/chunks/|PDFServicesSDK|wiki_\w+_docs|paper_docs|/papers?/|Organizational Transformation",
                         re.I)
_TEXT_FORMS = [("proxy-statement", r"proxy statement|notice of (the )?annual meeting"),
               ("modern-slavery", r"modern slavery"), ("governance-statement", r"governance statement"),
               ("sustainability", r"sustainab|esg|responsib|non.?financ|sostenibilit|gri |climate|impact report"),
               ("earnings", r"results presentation|investor presentation|earnings|half.year results|full.year results"),
               ("annual-report", r"annual report|bilancio")]
_REGISTRANT = re.compile(r"([A-Z][\w.,&' -]{2,80}?)\s*\(?\s*Exact name of registrant", re.I)
_SHARED_FILE = re.compile(r"([A-Z0-9]+)_(\d{4})(?:Q\d)?_(10K|10Q|8K|EARNINGS)")
_SHARED_FORMS = {"10K": "10-K", "10Q": "10-Q", "8K": "8-K", "EARNINGS": "earnings"}


def survey_repo(repository: str, mirror: Path, work: Path) -> list[dict]:
    """One row per PDF at HEAD: where it is, sha1, pages, text on the first pages, held-out verdict."""
    import pymupdf

    gdir = git_dir(mirror, repository)
    head = git_head(gdir)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for _blob, size, path in _pdf_entries(gdir):
        if size < 0:
            continue  # the snapshot dropped it (4 MiB and over)
        data = git_blob(gdir, head, path)
        if data.startswith(b"%PDF"):
            rows.append({"repository": repository, "commit": head, "path": path,
                         "sha1": hashlib.sha1(data).hexdigest()})
            (work / f"{rows[-1]['sha1']}.pdf").write_bytes(data)  # the guard reads files
    # the guard runs before any PDF is opened: a held-out file is never read
    held = guard_held([str(work / f"{r['sha1']}.pdf") for r in rows]) if rows else []
    for r, h in zip(rows, held, strict=True):
        r["held"] = h
        if not h:
            try:
                with pymupdf.open(work / f"{r['sha1']}.pdf") as doc:
                    text = "".join(doc[i].get_text() for i in range(min(3, doc.page_count)))
                    r.update(pages=doc.page_count, text3=len(text.strip()), first=" ".join(text.split())[:1500])
            except Exception as e:  # noqa: BLE001 - any PyMuPDF failure means the file is not usable
                r["error"] = str(e)[:100]
    for r in rows:
        (work / f"{r['sha1']}.pdf").unlink(missing_ok=True)  # copies were for the guard only
    return rows


def form_of(first: str, name: str, rule: dict) -> str:
    """The report's kind: a path pattern's fixed form, an SEC form on the cover, else a keyword reading."""
    pattern = rule.get("pattern")
    if rule.get("form") and pattern and re.match(pattern, name, re.I):
        return rule["form"]
    head = first[:1500]
    for f in SEC_FORMS:
        if re.search(r"FORM\s+" + f.replace("-", r"\s*-?\s*"), head, re.I):
            return f
    low = head.lower()
    return next((kind for kind, rx in _TEXT_FORMS if re.search(rx, low)), "other")


def year_of(first: str, path: str, form: str, rule: dict) -> int | None:
    """The fiscal year: a path pattern's, the cover's period for SEC forms, else the first year in the name."""
    m = re.match(rule["pattern"], Path(path).name, re.I) if rule.get("pattern") else None
    if m and "year" in m.groupdict():
        return int(m.group("year"))
    period = {"10-K": "fiscal year", "20-F": "fiscal year", "40-F": "fiscal year", "10-Q": "quarterly period"}
    if form in period:
        m = re.search(period[form] + r" ended\s*:?\s*\w+\s+\d{1,2}\s*,?\s*((?:19|20)\d\d)", first, re.I)
        if m:
            return int(m.group(1))
    name = Path(path).name
    m = re.search(r"(?<!\d)((?:19|20)\d\d)(?!\d)", name) or re.search(r"FY\s?(\d\d)(?!\d)", name)
    if m:
        y = int(m.group(1))
        return y + 2000 if y < 100 else y
    m = re.search(r"(?<!\d)(20[0-2]\d)(?!\d)", first[:400])
    return int(m.group(1)) if m else None


def issuer_of(first: str, path: str, form: str, rule: dict) -> str | None:
    """The registrant on an SEC cover; else the repository's rule (a fixed name, or a pattern on the path)."""
    if form in ("10-K", "10-Q", "8-K"):
        m = _REGISTRANT.search(first)
        if m:
            name = re.sub(r"^.*(?:Commission [Ff]ile [Nn]umber|File No\.?)[:\s]*[\d-]+\s*", "", m.group(1)).strip(" ,(")
            name = re.sub(r"^[_\s]+", "", name[-60:])
            return re.sub(r"^[A-Z][a-z]+ \d{1,2}, \d{4}\s*", "", name).strip() or None
    if "issuer" in rule:
        return rule["issuer"]
    target = {"path": path, "name": Path(path).name, "stem": Path(path).stem}[rule.get("on", "name")]
    m = re.search(rule["pattern"], target, re.I) if rule.get("pattern") else None
    if not (m and "issuer" in m.groupdict()):
        return None
    name = re.sub(r"[%s]+" % re.escape(rule.get("spaces", "_")), " ", m.group("issuer"))
    return name.replace(" .", ".").strip() or None


def shared_filings() -> set[tuple[str, int, str]]:
    """(first word of the issuer, year, form) of every shared retrieval document."""
    out = set()
    for line in (SHARED / "retrieval" / "docs.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        m = _SHARED_FILE.match(d["file"])
        if m:
            out.add((slug(d["company"]).split("-")[0], int(m.group(2)), _SHARED_FORMS[m.group(3)]))
    return out


def _period(first: str, path: str, form: str) -> str | None:
    """What tells apart several 10-Qs or 8-Ks of one year: the period (or event date) on the cover."""
    if form not in ("10-Q", "8-K"):
        return None
    m = re.search(r"(?:period ended|Date of Report[^:]*:?)\s*\(?\s*([A-Z][a-z]+\s+\d{1,2}\s*,\s*\d{4})", first)
    return m.group(1) if m else path


def select(rows: list[dict], sources: dict, known: set[str], shared: set[tuple]) -> tuple[list[dict], Counter]:
    """Manifest rows (doc_id order) and the count of surveyed PDFs left out, by reason."""
    out, seen, filings, left = [], set(), set(), Counter()
    for r in sorted(rows, key=lambda r: (r["repository"], r["path"])):
        reason = ("held out" if r.get("held") else "under 20 pages or unreadable" if r.get("error")
                  or r.get("pages", 0) < MIN_PAGES else "no text layer" if r.get("text3", 0) < MIN_TEXT
                  else "a shared-data or corpus PDF" if r["sha1"] in known else "another copy" if r["sha1"] in seen
                  else "not a company report" if NOT_REPORTS.search(r["path"]) else None)
        if reason:
            left[reason] += 1
            continue
        seen.add(r["sha1"])
        rule = sources[r["repository"]]
        form = form_of(r["first"], Path(r["path"]).name, rule)
        issuer = issuer_of(r["first"], r["path"], form, rule)
        year = year_of(r["first"], r["path"], form, rule)
        key = (slug(issuer or ""), year, form, _period(r["first"], r["path"], form))
        if form in ONE_PER_YEAR and issuer and key in filings:
            left["same issuer, year and form"] += 1
            continue
        filings.add(key)
        first_word = slug(issuer or "").split("-")[0]
        if first_word and (first_word, year, form) in shared:
            left["a shared retrieval filing"] += 1
            continue
        stem = slug(Path(r["path"]).stem)[:40].strip("-") or "doc"
        family = slug(issuer)[:30].strip("-") if issuer else slug(r["repository"].split("/")[1])[:30].strip("-")
        out.append({"doc_id": f"{family}--{stem}--{r['sha1'][:6]}", "repository": r["repository"],
                    "commit": r["commit"], "path": r["path"], "sha1": r["sha1"], "licence": rule["licence"],
                    "issuer": issuer, "year": year, "form": form, "pages": r["pages"]})
    names = sorted({r["issuer"] for r in out if r["issuer"]})
    held = {n for n, h in zip(names, guard_held(["--issuer", *names]) if names else [], strict=True) if h}
    left["issuer held out"] = sum(r["issuer"] in held for r in out)
    return sorted((r for r in out if r["issuer"] not in held), key=lambda r: r["doc_id"]), left


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.bench.scale_manifest", description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", default="/work/.mirror", help="the fetch tool's mirror folder")
    ap.add_argument("--work", default=str(CACHE / "scale-survey"), help="where the held-out guard reads its PDF copies (emptied after)")
    ap.add_argument("--out", default=str(MANIFEST))
    args = ap.parse_args(argv)
    sources = json.loads(SOURCES.read_text(encoding="utf-8"))["repositories"]
    held_repos = guard_held(["--repo", *sources])
    if any(held_repos):
        raise SystemExit(f"held-out repositories in sources.json: {[r for r, h in zip(sources, held_repos) if h]}")
    rows = [row for repo in sources for row in survey_repo(repo, Path(args.mirror), Path(args.work))]
    known = shared_sha1s() | {json.loads(line)["sha1"] for line in CORPUS_MANIFEST.read_text().splitlines()}
    kept, left = select(rows, sources, known, shared_filings())
    Path(args.out).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), encoding="utf-8")
    print(f"{len(kept)} reports, {sum(r['pages'] for r in kept)} pages -> {args.out}; left out {dict(left)}; "
          f"forms {dict(Counter(r['form'] for r in kept).most_common())}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

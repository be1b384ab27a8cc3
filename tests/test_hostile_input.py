"""Hostile but realistic input: every case ends in a result or in one clear error (exit 2), never a
traceback, a hang or a silently lost document.  All inputs are generated here; no shared data needed.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest

from hostileutil import DEEP, READERS, cli, json_readers
from indexutil import GLOBEX, lexical_index, make_report
from pdfgen import PDFBuilder
from structrag.cli import main

REPO = Path(__file__).resolve().parents[1]
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def run_cli(*args: str, timeout: float = 120, env: dict | None = None):
    """The real command line in a child process (a hang fails the test at ``timeout``)."""
    code = "import sys; from structrag.cli import main; sys.exit(main())"
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout,
                          env=full_env, cwd="/")


def assert_clean_error(r, *needles: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    assert "Traceback" not in r.stderr, r.stderr
    for n in needles:
        assert n in r.stderr, (n, r.stderr)


@pytest.fixture()
def index_dir(tmp_path):
    return lexical_index(tmp_path)


# --- lost documents ---------------------------------------------------------------------------------------------


def test_same_base_name_in_two_folders_keeps_both(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    make_report(tmp_path / "a" / "report.pdf")
    make_report(tmp_path / "b" / "report.pdf", GLOBEX)
    out = tmp_path / "ix"
    assert main(["index", str(tmp_path / "a" / "report.pdf"), "--out", str(out), "--no-dense", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["index", str(tmp_path / "b" / "report.pdf"), "--out", str(out), "--no-dense", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["replaced"] == [] and rep["documents"] == 2
    from retrievers.index import Index

    with Index.open(out) as ix:
        names = sorted(d.name for d in ix.documents())
        assert names == ["a/report.pdf", "b/report.pdf"]
        assert {Path(d.path).parent.name for d in ix.documents()} == {"a", "b"}
    # a bare name that two documents share is ambiguous: the error names both
    capsys.readouterr()
    assert main(["query", str(out), "dividends", "--mode", "bm25", "--doc", "report.pdf"]) == 2
    err = capsys.readouterr().err
    assert "ambiguous" in err and "a/report.pdf" in err and "b/report.pdf" in err
    # a path picks one
    assert main(["query", str(out), "dividends", "--mode", "bm25", "--doc", "b/report.pdf", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits and {h["doc"] for h in hits} == {"b/report.pdf"}
    # the same file again is unchanged, not a third document
    capsys.readouterr()
    assert main(["index", str(tmp_path / "b" / "report.pdf"), "--out", str(out), "--no-dense", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["unchanged"] == ["b/report.pdf"] and rep["documents"] == 2


def test_a_file_changed_in_place_is_replaced(tmp_path, capsys):
    pdf = make_report(tmp_path / "report.pdf")
    out = tmp_path / "ix"
    assert main(["index", str(pdf), "--out", str(out), "--no-dense", "--quiet"]) == 0
    make_report(pdf, GLOBEX)
    capsys.readouterr()
    assert main(["index", str(pdf), "--out", str(out), "--no-dense", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["replaced"] == ["report.pdf"] and rep["documents"] == 1


# --- hangs ------------------------------------------------------------------------------------------------------


def test_fifo_named_pdf_does_not_hang(tmp_path):
    fifo = tmp_path / "x.pdf"
    os.mkfifo(fifo)
    r = run_cli("toc", str(fifo), timeout=60)
    assert_clean_error(r, "x.pdf", "not a regular file")
    r = run_cli("index", str(fifo), "--out", str(tmp_path / "ix"), "--no-dense", "--quiet", timeout=60)
    assert_clean_error(r, "x.pdf", "not a regular file")


def test_symlink_to_dev_zero_does_not_hang(tmp_path):
    link = tmp_path / "zero.pdf"
    link.symlink_to("/dev/zero")
    r = run_cli("index", str(link), "--out", str(tmp_path / "ix"), "--no-dense", "--quiet", timeout=60)
    assert_clean_error(r, "zero.pdf", "device")


# --- text that is not text ----------------------------------------------------------------------------------------


def _titled_report(path: Path, titles: list[str]) -> Path:
    b = PDFBuilder(header=None)
    for t in titles:
        b.new_page()
        b.heading(t, size=18)
        b.para()
        b.para()
    return b.save(path)


def test_control_character_in_a_title_does_not_drop_the_heading(tmp_path, capsys):
    pdf = _titled_report(tmp_path / "r.pdf", ["1. Heading\x00", "2. Second Heading", "3. Third Heading"])
    assert main(["toc", str(pdf), "--json", "--ignore-outline"]) == 0
    texts = [h["text"] for h in json.loads(capsys.readouterr().out)["headings"]]
    assert "1. Heading" in texts, texts
    assert not any("\x00" in t for t in texts)


def test_human_output_cannot_drive_the_terminal(tmp_path, capsys):
    b = PDFBuilder(header=None)
    b.new_page()
    b.heading("Risk \x1b]0;pwned\x07Factors", size=18)
    b.para("Competition \x1b[31mfrom larger vendors\x1b[0m could reduce revenue and margins in every segment.")
    pdf = b.save(tmp_path / "evil.pdf", toc=[[1, "Risk \x1b]0;pwned\x07Factors", 1]])
    out = tmp_path / "ix"
    assert main(["index", str(pdf), "--out", str(out), "--no-dense", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["query", str(out), "competition vendors revenue", "--mode", "bm25"]) == 0
    text = capsys.readouterr().out
    assert "vendors" in text and "\x1b" not in text and "\x07" not in text
    assert main(["toc", str(pdf)]) == 0
    assert "\x1b" not in capsys.readouterr().out


# --- queries with nothing to search -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid", "ranker"])
@pytest.mark.parametrize("query", ["", "   ", "?!…", "«»"])
def test_query_without_a_searchable_term_is_an_error_in_every_mode(index_dir, capsys, mode, query):
    capsys.readouterr()
    assert main(["query", str(index_dir), query, "--mode", mode]) == 2
    err = capsys.readouterr().err
    assert "no searchable term" in err and "Traceback" not in err


def test_query_without_a_searchable_term_raises_a_value_error(index_dir):
    from retrievers.index import Index
    from structrag.errors import StructragError

    with Index.open(index_dir) as ix:
        for mode in ("bm25", "ranker"):
            with pytest.raises(ValueError, match="no searchable term") as exc:
                ix.search("?!", mode=mode)
            assert isinstance(exc.value, StructragError)


@pytest.mark.parametrize("bad", ["0", "-3"])
def test_candidates_must_be_positive(index_dir, capsys, bad):
    capsys.readouterr()
    assert main(["query", str(index_dir), "dividends", f"--candidates={bad}"]) == 2
    assert "--candidates" in capsys.readouterr().err


# --- errors, not tracebacks ---------------------------------------------------------------------------------------


@pytest.mark.skipif(IS_ROOT, reason="root reads every file whatever its mode bits")
def test_unreadable_pdf(tmp_path):
    pdf = make_report(tmp_path / "secret.pdf")
    pdf.chmod(0)
    r = run_cli("toc", str(pdf))
    assert_clean_error(r, "secret.pdf", "permission denied")


def test_random_bytes_in_the_database(index_dir):
    db = index_dir / "index.sqlite"
    data = bytearray(db.read_bytes())
    rnd = random.Random(1)
    for i in range(100, len(data), 97):
        data[i] = rnd.randrange(256)
    db.write_bytes(bytes(data))
    for name in ("index.sqlite-wal", "index.sqlite-shm"):
        (index_dir / name).unlink(missing_ok=True)
    r = run_cli("query", str(index_dir), "dividends", "--mode", "bm25")
    assert_clean_error(r, "index.sqlite")


@pytest.mark.parametrize("target", ["arrays.npz", "bm25_chunks/bm25s/data.csc.index.npy",
                                    "bm25_heads/bm25s/vocab.index.json", "docs.json"])
def test_damaged_derived_files_are_rebuilt_from_the_database(index_dir, capsys, target):
    capsys.readouterr()
    assert main(["query", str(index_dir), "dividends per share", "--mode", "bm25", "--json"]) == 0
    before = json.loads(capsys.readouterr().out)
    (gen,) = sorted((index_dir / "derived").glob("g*"))
    f = gen / target
    raw = f.read_bytes()
    f.write_bytes(raw[: len(raw) // 2] + b"\x00garbage{" * 3)
    for mode in ("bm25", "ranker"):
        assert main(["query", str(index_dir), "dividends per share", "--mode", mode, "--json"]) == 0
        got = json.loads(capsys.readouterr().out)
        if mode == "bm25":
            assert got == before


def test_levels_given_a_folder_or_a_bad_reference(tmp_path, capsys):
    pdf = make_report(tmp_path / "r.pdf")
    assert main(["levels", str(tmp_path), "--pdf", str(pdf)]) == 2
    assert "folder" in capsys.readouterr().err
    for rec in ({"text": "Item 1. Business", "page": 1, "size": "big"},
                {"text": "Item 1. Business", "page": 1, "color": 1e999}):
        ref = tmp_path / "ref.json"
        ref.write_text(json.dumps([rec]).replace("Infinity", "1e999"))
        capsys.readouterr()
        assert main(["levels", str(ref)]) == 2
        err = capsys.readouterr().err
        assert "ref.json" in err and "heading 1" in err


def test_garbage_exact_below_setting(index_dir, monkeypatch, capsys):
    monkeypatch.setenv("STRUCTRAG_EXACT_BELOW", "abc")
    capsys.readouterr()
    assert main(["query", str(index_dir), "dividends", "--mode", "bm25"]) == 2
    assert "STRUCTRAG_EXACT_BELOW" in capsys.readouterr().err


def test_backend_typo_is_an_error_listing_the_valid_ones(tmp_path):
    pdf = make_report(tmp_path / "r.pdf")
    r = run_cli("toc", str(pdf), env={"STRUCTRAG_BACKEND": "vllm"})
    assert_clean_error(r, "STRUCTRAG_BACKEND", "offline")


# --- wrong diagnosis ----------------------------------------------------------------------------------------------


def test_pdf_with_a_non_utf8_file_name_opens(tmp_path, capsys):
    src = make_report(tmp_path / "plain.pdf")
    odd = os.fsencode(str(tmp_path)) + b"/r\xe9sultats.pdf"
    os.rename(os.fsencode(str(src)), odd)
    assert main(["toc", os.fsdecode(odd), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["headings"]


# --- read-only indexes --------------------------------------------------------------------------------------------


def _can_mount_read_only() -> bool:
    if not shutil.which("unshare") or not IS_ROOT:
        return False
    try:
        return subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _run_on_read_only_mount(folder: Path, *args: str):
    """The CLI in a private mount namespace where ``folder`` is bind-mounted read-only (as on a shared mount)."""
    code = "import sys; from structrag.cli import main; sys.exit(main())"
    cli = " ".join(shlex.quote(a) for a in [sys.executable, "-c", code, *args])
    f = shlex.quote(str(folder))
    script = f"mount --bind {f} {f} && mount -o remount,bind,ro {f} && exec {cli}"
    return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, cwd="/")


def test_read_only_index_answers_queries(index_dir):
    from retrievers.index import Index

    with Index.open(index_dir):  # a clean close checkpoints the WAL
        pass
    if IS_ROOT:
        if not _can_mount_read_only():
            pytest.skip("root ignores mode bits, and no private read-only mount can be made here (unshare -m)")
        r = _run_on_read_only_mount(index_dir, "query", str(index_dir), "dividends per share", "--mode", "bm25")
        assert r.returncode == 0 and "globex.pdf" in r.stdout, r.stderr
        r = _run_on_read_only_mount(index_dir, "index", str(index_dir.parent / "pdfs"), "--out", str(index_dir),
                                    "--no-dense")
        assert_clean_error(r, "read-only")
        return
    for p in [index_dir, *index_dir.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        r = run_cli("query", str(index_dir), "dividends per share", "--mode", "bm25")
        assert r.returncode == 0 and "globex.pdf" in r.stdout, r.stderr
    finally:
        for p in [index_dir, *index_dir.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)


# --- smaller ------------------------------------------------------------------------------------------------------


def test_index_accepts_a_password_for_encrypted_pdfs(tmp_path, capsys):
    src = make_report(tmp_path / "plain.pdf")
    doc = pymupdf.open(src)
    enc = tmp_path / "locked.pdf"
    doc.save(enc, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="s3cret", owner_pw="own")
    out = tmp_path / "ix"
    assert main(["index", str(enc), "--out", str(out), "--no-dense", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "locked.pdf" in err and "--password" in err
    assert main(["index", str(enc), "--out", str(out), "--no-dense", "--password", "s3cret", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["added"] == ["locked.pdf"]


def test_index_warns_about_pages_without_text(tmp_path, capsys):
    doc = pymupdf.open()
    for _ in range(2):
        page = doc.new_page()
        page.draw_rect(pymupdf.Rect(50, 50, 300, 300), color=(0, 0, 0), fill=(0.5, 0.5, 0.5))
    doc.save(tmp_path / "scan.pdf")
    assert main(["index", str(tmp_path / "scan.pdf"), "--out", str(tmp_path / "ix"), "--no-dense"]) == 0
    assert "without a text layer" in capsys.readouterr().err


def test_blank_outline_titles_are_not_headings(tmp_path, capsys):
    b = PDFBuilder(header=None)
    for t in ("Overview", "Results"):
        b.new_page()
        b.heading(t, size=18)
        b.para()
    pdf = b.save(tmp_path / "r.pdf", toc=[[1, "Overview", 1], [1, "   ", 1], [1, "", 2], [1, "Results", 2]])
    assert main(["toc", str(pdf), "--json"]) == 0
    texts = [h["text"] for h in json.loads(capsys.readouterr().out)["headings"]]
    assert texts == ["Overview", "Results"]


def test_missing_vector_file_is_repaired(tmp_path, capsys):
    pytest.importorskip("faiss")
    pytest.importorskip("sentence_transformers")
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    make_report(pdfs / "acme.pdf")
    out = tmp_path / "ix"
    assert main(["index", str(pdfs), "--out", str(out), "--quiet"]) == 0
    for f in (out / "vectors").glob("*.npy"):
        f.unlink()
    capsys.readouterr()
    # lexical search never needs the vectors
    assert main(["query", str(out), "capital expenditures", "--mode", "bm25"]) == 0
    # a dense mode says what is wrong and how to fix it
    assert main(["query", str(out), "capital expenditures", "--mode", "dense"]) == 2
    assert "--repair" in capsys.readouterr().err
    assert main(["index", str(pdfs), "--out", str(out), "--repair", "--quiet"]) == 0
    assert main(["query", str(out), "capital expenditures", "--mode", "dense"]) == 0


# --- damaged index, fuzzed ----------------------------------------------------------------------------------------


def test_fuzzed_index_answers_or_exits_2(tmp_path, index_dir):
    files = [p for p in index_dir.rglob("*") if p.is_file() and p.suffix in (".sqlite", ".npy", ".npz", ".json")]
    pristine = tmp_path / "pristine"
    shutil.copytree(index_dir, pristine)
    rnd = random.Random(20261203)
    for trial in range(12):
        shutil.rmtree(index_dir)
        shutil.copytree(pristine, index_dir)
        target = rnd.choice(files)
        data = bytearray(target.read_bytes())
        for _ in range(rnd.randint(1, 8)):
            data[rnd.randrange(len(data))] = rnd.randrange(256)
        target.write_bytes(bytes(data))
        mode = rnd.choice(["bm25", "ranker"])
        r = run_cli("query", str(index_dir), "dividends per share", "--mode", mode, timeout=60)
        assert r.returncode in (0, 2), (trial, target, r.stderr[-3000:])
        assert "Traceback" not in r.stderr, (trial, target, r.stderr[-3000:])
        if r.returncode == 2:
            assert r.stderr.strip(), (trial, target)


# --- every file and setting the command line reads, fuzzed ----------------------------------------------------------

# contents no JSON (or JSON-lines) reader should meet with a traceback: empty, not UTF-8, a byte-order mark, JSON of
# every other shape, unterminated, nested too deep, an integer past Python's digit limit, NaN and overflowing numbers
_HOSTILE_JSON = [b"", b"\xff\xfe\x00garbage\x00", b"\xef\xbb\xbf[]", b"null", b"[]", b"{}", b"7", b'"text"',
                 b"[" * 3000, b'{"a": ', DEEP.encode(), b"9" * 5000, b'{"a": NaN, "b": [1e999]}',
                 b'[{"text": 1, "page": true, "doc": null, "query": [], "relevant_pages": "x", "doc_id": {}}]',
                 b'{"doc": 1, "query": {}, "relevant_pages": [-1], "evidence": 3}']


@pytest.fixture(scope="module")
def fuzz_index(tmp_path_factory):
    return lexical_index(tmp_path_factory.mktemp("fuzz"))


def _answers_or_one_error(rc: int, err: str, path: Path, what) -> None:
    assert rc in (0, 1, 2), (what, rc, err[-2000:])
    if rc == 2:
        lines = [ln for ln in err.splitlines() if ln.startswith("structrag: error:")]
        assert len(lines) == 1 and path.name in lines[0], (what, err[-2000:])


@pytest.mark.parametrize("name", READERS)
def test_fuzzed_json_files_give_a_result_or_one_error_naming_the_file(tmp_path, fuzz_index, capsys, name):
    path, argv = json_readers(tmp_path, fuzz_index)[name]
    for content in _HOSTILE_JSON:
        if name == "manifest" and not content:
            continue  # an empty manifest trains on --also alone; without it the error says there is nothing
        for variant in (content, content + b"\n" + content):  # JSON lines: a bad second line too
            path.write_bytes(variant)
            rc, _, err = cli(capsys, *argv)  # an exception here is the traceback a user would see
            _answers_or_one_error(rc, err, path, variant[:40])
    # not a file at all
    path.unlink()
    path.mkdir()
    _answers_or_one_error(*cli(capsys, *argv)[::2], path, "a folder")
    path.rmdir()
    if name not in ("checkpoint",):  # a checkpoint that does not exist yet is made
        _answers_or_one_error(*cli(capsys, *argv)[::2], path, "missing")


@pytest.mark.parametrize("name", READERS)
def test_a_fifo_in_place_of_a_json_file_does_not_hang(tmp_path, fuzz_index, name):
    path, argv = json_readers(tmp_path, fuzz_index)[name]
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    r = run_cli(*map(str, argv), timeout=60)
    assert_clean_error(r, path.name, "not a regular file")


# values no setting should meet with a traceback: blank, control and non-ASCII characters, numbers of the wrong
# kind, URLs that do not parse, a long string, paths of the wrong kind
def _hostile_values(tmp_path: Path) -> list[str]:
    a_file = tmp_path / "a_file"
    a_file.write_text("not what it should be\n")
    (tmp_path / "a_folder").mkdir(exist_ok=True)
    return [" ", "\t", "\x7f", "é", "-1", "0", "1e999", "nan", "http://[::1", "ht!tp://x", "x" * 5000,
            str(a_file), str(tmp_path / "a_folder")]


def test_fuzzed_environment_gives_a_result_or_one_error_naming_the_variable(tmp_path, fuzz_index, capsys,
                                                                           monkeypatch):
    pytest.importorskip("openai")
    pdf = make_report(tmp_path / "r.pdf")
    for var in ("STRUCTRAG_BACKEND", "STRUCTRAG_BASE_URL", "STRUCTRAG_API_KEY", "STRUCTRAG_MODEL",
                "STRUCTRAG_EXACT_BELOW", "STRUCTRAG_EMBED_BACKEND", "STRUCTRAG_SHARED_DATA"):
        for value in _hostile_values(tmp_path):
            if var == "STRUCTRAG_EMBED_BACKEND" and not value.strip():
                continue  # blank means the default engine: a real embedding run, not a hostile value
            with monkeypatch.context() as m:
                # a model server that refuses at once: the settings are read, nothing waits
                m.setenv("STRUCTRAG_MODEL", "m")
                m.setenv("STRUCTRAG_BASE_URL", "http://127.0.0.1:9/v1")
                m.setenv(var, value)
                argv = {"STRUCTRAG_EXACT_BELOW": ["query", fuzz_index, "dividends", "--mode", "bm25"],
                        "STRUCTRAG_EMBED_BACKEND": ["index", pdf, "--out", tmp_path / "ix", "--quiet"],
                        "STRUCTRAG_SHARED_DATA": ["train-levels", "--out", tmp_path / "m.txt"],
                        }.get(var, ["toc", pdf, "--ignore-outline", "--predictor", "llm", "--fallback", "none"])
                rc, _, err = cli(capsys, *argv)
                assert rc in (0, 2), (var, value[:40], err[-2000:])
                lines = [ln for ln in err.splitlines() if ln.startswith("structrag: error:")]
                assert rc == 0 or len(lines) == 1, (var, value[:40], err[-2000:])


@pytest.mark.parametrize("var", ["STRUCTRAG_CACHE", "STRUCTRAG_EMBEDDING_CACHE", "STRUCTRAG_EMBED_THREADS"])
def test_fuzzed_cache_and_thread_settings_are_used_or_refused_by_name(tmp_path, monkeypatch, var):
    from retrievers.embed.encoder import DenseEncoder, default_threads
    from structrag.errors import ConfigError
    from structrag.files import cache_folder

    use = {"STRUCTRAG_CACHE": lambda: cache_folder("x"), "STRUCTRAG_EMBED_THREADS": default_threads,
           "STRUCTRAG_EMBEDDING_CACHE": lambda: DenseEncoder().cache}[var]
    monkeypatch.chdir(tmp_path)  # relative values land here
    for value in _hostile_values(tmp_path):
        monkeypatch.setenv(var, value)
        try:
            use()
        except ConfigError as exc:
            assert var in str(exc), (value[:40], exc)

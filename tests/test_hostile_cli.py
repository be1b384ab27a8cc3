"""Hostile input to the command line, case by case: each ends in a correct result or in one clear error line
(exit 2) that names the file or the setting and says the fix; never a traceback, a hang or lost data.

The cases are the hostile corpus's: numbered headings past 99, PDFs whose page tree lies, outsized pages
and wrong output paths in ``view``, symlink loops, malformed server settings, caches that are not caches,
JSON nested too deep, checkpoints and manifests that are not what they claim, blank outline titles.  All
inputs are generated here.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path

import pymupdf
import pytest

from hostileutil import DEEP, READERS, cli, headings_folder, json_readers, one_error, plain_report
from indexutil import make_report, make_reports, write_queries
from pdfgen import PDFBuilder
from structrag.cli import main
from structrag.errors import ConfigError

@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile-cli")
    make_reports(root / "pdfs")
    out = root / "index"
    assert main(["index", str(root / "pdfs"), "--out", str(out), "--no-dense", "--quiet"]) == 0
    return out


# --- numbered headings past 99 -------------------------------------------------------------------------------


def test_numbered_headings_past_99_are_all_kept(tmp_path, capsys):
    b = PDFBuilder(header=None)
    for i in range(1, 151):
        if i % 3 == 1:
            b.new_page()
        b.heading(f"{i}. Title of part {i}", size=14)
        b.para("The company reports its results in this section. Revenue grew in every segment during the year.")
    pdf = b.save(tmp_path / "n150.pdf")
    rc, out, _ = cli(capsys, "toc", pdf, "--json", "--ignore-outline")
    assert rc == 0
    texts = [h["text"] for h in json.loads(out)["headings"]]
    assert texts == [f"{i}. Title of part {i}" for i in range(1, 151)]


def test_a_three_digit_heading_number_needs_its_stop():
    from structrag.numbering import continues, parse_numbering

    n99, _ = parse_numbering("99. Title")
    n100, rest = parse_numbering("100. Title")
    assert n100 is not None and n100.values == (100,) and rest == "Title" and continues(n99, n100)
    assert parse_numbering("101) Title")[0].values == (101,)
    # counts and years stay text
    for text in ("250 employees joined", "2022. Highlights", "100 Main Street"):
        assert parse_numbering(text)[0] is None, text


# --- a page tree that lies --------------------------------------------------------------------------------------


def _lying(src: Path, dst: Path, old: bytes, new: bytes) -> Path:
    raw = src.read_bytes()
    assert raw.count(old) == 1, old
    dst.write_bytes(raw.replace(old, new))
    return dst


def _kids(raw: bytes) -> bytes:
    return re.search(rb"/Kids\s*\[[^\]]*\]", raw).group(0)


def test_a_page_count_that_lies_keeps_the_pages_there_are(tmp_path, capsys):
    pdf = _lying(plain_report(tmp_path / "ok.pdf"), tmp_path / "claims9.pdf", b"/Count 3", b"/Count 9")
    rc, out, err = cli(capsys, "toc", pdf)
    assert rc == 0 and "1. Section 1" in out and "3. Section 3" in out
    assert "claims9.pdf" in err and "pages 4-9" in err
    rc, _, err = cli(capsys, "view", pdf, "-o", tmp_path / "v.html")
    assert rc == 0 and "6 page(s) could not be drawn" in err and "page 4-9" in err, err
    assert len(list((tmp_path / "v_pages").glob("*.jpg"))) == 3


def test_a_page_tree_cycle_loses_only_its_pages(tmp_path, capsys):
    ok = plain_report(tmp_path / "ok.pdf")
    raw = ok.read_bytes()
    kids = _kids(raw)
    # a fourth kid that is the page tree itself: MuPDF raises "code=7: cycle in page tree" for pages 4-6
    bad = raw.replace(kids, kids[:-1] + b" 2 0 R]").replace(b"/Count 3", b"/Count 6")
    (tmp_path / "cycle.pdf").write_bytes(bad)
    rc, out, err = cli(capsys, "toc", tmp_path / "cycle.pdf")
    assert rc == 0 and "3. Section 3" in out and "pages 4-6" in err, err
    rc, _, err = cli(capsys, "view", tmp_path / "cycle.pdf", "-o", tmp_path / "c.html")
    assert rc == 0 and "page 4-6" in err, err


def test_a_page_count_past_belief_is_a_corrupt_pdf(tmp_path, capsys):
    pdf = _lying(plain_report(tmp_path / "ok.pdf"), tmp_path / "huge.pdf", b"/Count 3", b"/Count 1000000")
    for argv in (("toc", pdf), ("view", pdf, "-o", tmp_path / "h.html")):
        line = one_error(capsys, *argv, names=("huge.pdf", "page tree"))
        assert "Traceback" not in line
    rc, _, err = cli(capsys, "index", pdf, "--out", tmp_path / "ix", "--no-dense", "--quiet")
    assert rc == 2 and "huge.pdf" in err and "page tree" in err


# --- view ---------------------------------------------------------------------------------------------------------


def test_view_draws_the_largest_page_pdf_allows(tmp_path, capsys):
    doc = pymupdf.open()
    page = doc.new_page(width=14400, height=14400)
    page.insert_text((72, 144), "1. A very large heading", fontsize=60)
    doc.save(tmp_path / "big.pdf")
    rc, _, err = cli(capsys, "view", tmp_path / "big.pdf", "-o", tmp_path / "big.html")
    assert rc == 0 and "drawn below 96 dpi" in err, err
    (img,) = (tmp_path / "big_pages").glob("*.jpg")
    pix = pymupdf.Pixmap(str(img))
    assert pix.width * pix.height <= 25_000_000 and pix.width > 1000


@pytest.mark.parametrize("dpi", ["0", "-5", "1000"])
def test_view_refuses_a_resolution_out_of_range(tmp_path, capsys, dpi):
    pdf = plain_report(tmp_path / "r.pdf")
    one_error(capsys, "view", pdf, f"--dpi={dpi}", "-o", tmp_path / "r.html", names=("--dpi", "24", "300"))
    assert not (tmp_path / "r.html").exists()


def test_view_never_writes_into_a_folder_named_as_output(tmp_path, capsys):
    pdf = plain_report(tmp_path / "r.pdf")
    folder = tmp_path / "keep"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    one_error(capsys, "view", pdf, "-o", folder, names=("keep", "is a folder", "-o"))
    assert [p.name for p in folder.iterdir()] == ["notes.txt"] and (folder / "notes.txt").read_text() == "mine"
    assert not (tmp_path / "keep_pages").exists()
    # a file where a parent folder should be
    one_error(capsys, "view", pdf, "-o", folder / "notes.txt" / "x.html", names=("notes.txt", "not a folder"))


def test_view_leaves_a_file_named_like_its_image_folder(tmp_path, capsys):
    pdf = plain_report(tmp_path / "r.pdf")
    (tmp_path / "r_pages").write_text("mine")
    one_error(capsys, "view", pdf, "-o", tmp_path / "r.html", names=("r_pages", "--inline"))
    assert (tmp_path / "r_pages").read_text() == "mine"
    rc, _, _ = cli(capsys, "view", pdf, "-o", tmp_path / "r.html", "--inline")
    assert rc == 0 and (tmp_path / "r.html").is_file()


def test_view_clears_only_its_own_images_from_its_image_folder(tmp_path, capsys):
    pdf = plain_report(tmp_path / "r.pdf")
    folder = tmp_path / "r_pages"
    folder.mkdir()
    (folder / "holiday.jpg").write_bytes(b"mine")
    (folder / "p0009.jpg").write_bytes(b"a stale page of an earlier run")
    rc, _, _ = cli(capsys, "view", pdf, "-o", tmp_path / "r.html")
    assert rc == 0 and (folder / "holiday.jpg").read_bytes() == b"mine" and not (folder / "p0009.jpg").exists()
    assert sorted(p.name for p in folder.glob("p*.jpg")) == ["p0001.jpg", "p0002.jpg", "p0003.jpg"]


def test_hits_view_refuses_a_folder_as_its_html(index_dir, tmp_path, capsys):
    one_error(capsys, "query", index_dir, "dividends", "--mode", "bm25", "--html", tmp_path, names=("is a folder",))
    one_error(capsys, "view", index_dir, "--query", "dividends", "--mode", "bm25", "-o", tmp_path, "--dpi", "0",
              names=("--dpi",))


# --- symlink loops and broken links -------------------------------------------------------------------------------


def test_a_symlink_loop_is_a_clear_error_in_every_command(tmp_path, capsys):
    loop = tmp_path / "loop.pdf"
    loop.symlink_to("loop.pdf")
    for argv in (("toc", loop), ("view", loop, "-o", tmp_path / "l.html")):
        one_error(capsys, *argv, names=("loop.pdf", "symbolic links"))
    rc, _, err = cli(capsys, "index", loop, "--out", tmp_path / "ix", "--no-dense", "--quiet")
    assert rc == 2 and "loop.pdf" in err and "symbolic links" in err, err


def test_links_to_nowhere_in_a_folder_are_reported_not_skipped(tmp_path, capsys):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    make_report(pdfs / "good.pdf")
    (pdfs / "loop.pdf").symlink_to("loop.pdf")
    (pdfs / "broken.pdf").symlink_to("missing.pdf")
    (pdfs / "sub").symlink_to(".")  # a folder loop: walked once
    rc, out, err = cli(capsys, "index", pdfs, "--out", tmp_path / "ix", "--no-dense", "--json")
    rep = json.loads(out)
    assert rc == 1 and rep["added"] == ["good.pdf"], (rep, err)
    failed = {Path(f["path"]).name: f["error"] for f in rep["failed"]}
    assert set(failed) == {"loop.pdf", "broken.pdf"}
    assert "symbolic links" in failed["loop.pdf"] and "broken link" in failed["broken.pdf"]


# --- model-server settings ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["http://[::1", "ht!tp://x", "http://local host:8000/v1", "localhost:8000/v1",
                                 "http://x:99999/v1", "http://"])
def test_a_malformed_server_url_names_the_variable(tmp_path, capsys, monkeypatch, url):
    pytest.importorskip("openai")
    pdf = plain_report(tmp_path / "r.pdf")
    monkeypatch.setenv("STRUCTRAG_MODEL", "m")
    monkeypatch.setenv("STRUCTRAG_BASE_URL", url)
    for argv in (("toc", pdf, "--backend", "llm"), ("toc", pdf, "--predictor", "llm")):
        one_error(capsys, *argv, names=("STRUCTRAG_BASE_URL", "http://localhost:8000/v1"))
    monkeypatch.delenv("STRUCTRAG_BASE_URL")
    one_error(capsys, "toc", pdf, "--backend", "llm", "--base-url", url, names=("--base-url",))


def test_an_api_key_a_header_cannot_carry_names_the_variable_not_the_key(tmp_path, capsys, monkeypatch):
    pytest.importorskip("openai")
    pdf = plain_report(tmp_path / "r.pdf")
    monkeypatch.setenv("STRUCTRAG_MODEL", "m")
    for key in ("clé-secrète", "sk-123\nX-Injected: 1"):
        monkeypatch.setenv("STRUCTRAG_API_KEY", key)
        line = one_error(capsys, "toc", pdf, "--backend", "llm", names=("STRUCTRAG_API_KEY",))
        assert "secr" not in line and "sk-123" not in line


def test_the_client_checks_its_settings_when_built(monkeypatch):
    pytest.importorskip("openai")
    from structrag.levels.backends._client import ChatClient

    with pytest.raises(ConfigError, match="base_url"):
        ChatClient(base_url="http://[::1", model="m")
    monkeypatch.setenv("OPENAI_BASE_URL", "ftp://x")
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL"):
        ChatClient(model="m")
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(ConfigError, match="api_key"):
        ChatClient(model="m", api_key="ключ")
    ChatClient(base_url="http://[::1]:8000/v1", model="m", api_key="sk-ok").close()


# --- caches -------------------------------------------------------------------------------------------------------


def test_a_cache_variable_naming_a_file_is_an_error_naming_it(tmp_path, monkeypatch):
    from structrag.files import cache_folder

    f = tmp_path / "cache"
    f.write_text("mine")
    monkeypatch.setenv("STRUCTRAG_CACHE", str(f))
    with pytest.raises(ConfigError, match="STRUCTRAG_CACHE") as exc:
        cache_folder("onnx")
    assert "names a file" in str(exc.value) and f.read_text() == "mine"
    monkeypatch.setenv("STRUCTRAG_CACHE", str(tmp_path / "new"))
    assert cache_folder("onnx") == tmp_path / "new" / "onnx" and (tmp_path / "new" / "onnx").is_dir()


def test_onnx_export_and_eval_caches_check_the_variable(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    from eval.references import default_cache_dir
    from retrievers.embed.onnx_export import onnx_model_path

    f = tmp_path / "cache"
    f.write_text("mine")
    monkeypatch.setenv("STRUCTRAG_CACHE", str(f))
    model = tmp_path / "model"
    model.mkdir()
    with pytest.raises(ConfigError, match="STRUCTRAG_CACHE"):
        onnx_model_path(str(model), int8=True)
    with pytest.raises(ConfigError, match="STRUCTRAG_CACHE"):
        default_cache_dir()
    assert f.read_text() == "mine"


def _foreign_db(path: Path) -> Path:
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE accounts (id INTEGER, name TEXT)")
        c.execute("INSERT INTO accounts VALUES (1, 'mine')")
    c.close()
    return path


@pytest.mark.parametrize("kind", ["text", "folder", "foreign-db", "binary"])
def test_an_embedding_cache_that_is_not_one_is_an_error_and_left_alone(tmp_path, monkeypatch, kind):
    from retrievers.embed.encoder import DenseEncoder

    p = tmp_path / "emb.sqlite"
    if kind == "text":
        p.write_text("my notes\n")
    elif kind == "folder":
        p.mkdir()
    elif kind == "foreign-db":
        _foreign_db(p)
    else:
        p.write_bytes(bytes(range(256)) * 20)
    before = p.read_bytes() if p.is_file() else None
    monkeypatch.setenv("STRUCTRAG_EMBEDDING_CACHE", str(p))
    with pytest.raises(ConfigError, match="STRUCTRAG_EMBEDDING_CACHE") as exc:
        DenseEncoder()
    assert "emb.sqlite" in str(exc.value)
    assert (p.read_bytes() if p.is_file() else None) == before
    with pytest.raises(ConfigError, match="cache"):
        DenseEncoder(cache=p)


def test_an_embedding_cache_is_still_made_and_reused(tmp_path, monkeypatch):
    from retrievers.embed.cache import EmbeddingCache

    p = tmp_path / "sub" / "emb.sqlite"
    c = EmbeddingCache(p, "m")
    c.put(["a"], [[1.0, 2.0]])
    c._conn.close()
    again = EmbeddingCache(p, "m")
    assert again.get(["a", "b"])[0].tolist() == [1.0, 2.0]
    again._conn.close()


def test_an_embedding_cache_error_stops_the_index_command(tmp_path, capsys, monkeypatch):
    pdf = make_report(tmp_path / "r.pdf")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    monkeypatch.setenv("STRUCTRAG_EMBEDDING_CACHE", str(notes))
    one_error(capsys, "index", pdf, "--out", tmp_path / "ix", "--quiet",
              names=("STRUCTRAG_EMBEDDING_CACHE", "notes.txt"))
    assert notes.read_text() == "my notes\n"


# --- checkpoints --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["folder", "binary", "someone-else-json", "json-list", "text", "deep"])
def test_a_checkpoint_path_that_is_no_checkpoint_is_an_error_and_left_alone(tmp_path, capsys, kind):
    pdf = plain_report(tmp_path / "r.pdf")
    ck = tmp_path / "ck.jsonl"
    content = {"binary": bytes(range(256)) * 8, "someone-else-json": b'{"name": "my settings"}\n',
               "json-list": b"[1, 2, 3]\n", "text": b"shopping list\nmilk\n", "deep": DEEP.encode()}.get(kind)
    if kind == "folder":
        ck.mkdir()
    else:
        ck.write_bytes(content)
    line = one_error(capsys, "toc", pdf, "--checkpoint", ck, names=("ck.jsonl", "--checkpoint"))
    assert "delete" not in line  # never advise deleting a file that is not ours
    assert (ck.is_dir() if kind == "folder" else ck.read_bytes() == content)


def test_a_checkpoint_of_another_run_or_with_damaged_steps(tmp_path, capsys):
    pdf = plain_report(tmp_path / "r.pdf")
    other = plain_report(tmp_path / "other.pdf", pages=4)
    ck = tmp_path / "ck.jsonl"
    rc, first, _ = cli(capsys, "toc", pdf, "--checkpoint", ck)
    assert rc == 0
    header = ck.read_text().splitlines()[0]
    one_error(capsys, "toc", other, "--checkpoint", ck, names=("ck.jsonl", "another run", "delete"))
    # steps of the right run whose fields are of the wrong kind are redone, not trusted
    for step in ({"start": 0, "end": 2, "levels": ["a", None], "sources": [1, 2], "confidences": [0, 0]},
                 {"start": 0, "end": 99, "levels": [1], "sources": ["x"], "confidences": [1.0]}, [0, 1], "x"):
        ck.write_text(header + "\n" + json.dumps(step) + "\n")
        rc, out, err = cli(capsys, "toc", pdf, "--checkpoint", ck)
        assert rc == 0 and out == first, err


def test_a_checkpoint_that_cannot_be_written(tmp_path, capsys):
    pdf = plain_report(tmp_path / "r.pdf")
    (tmp_path / "file").write_text("mine")
    one_error(capsys, "toc", pdf, "--checkpoint", tmp_path / "file" / "ck.jsonl", names=("ck.jsonl",))


# --- JSON nested too deep, in every JSON file the command line reads ----------------------------------------------


@pytest.mark.parametrize("name", READERS)
def test_json_nested_too_deep_is_a_format_error_naming_the_file(tmp_path, index_dir, capsys, name):
    path, argv = json_readers(tmp_path, index_dir)[name]
    path.write_text(DEEP if path.suffix == ".json" or name != "manifest" else DEEP + "\n")
    one_error(capsys, *argv, names=(path.name,))


def test_a_password_file_nested_too_deep(tmp_path, capsys):
    pdf = make_report(tmp_path / "r.pdf")
    pw = tmp_path / "pw.json"
    pw.write_text(DEEP)
    one_error(capsys, "index", pdf, "--out", tmp_path / "ix", "--no-dense", "--password-file", pw, names=("pw.json",))


# --- manifests of train-levels ------------------------------------------------------------------------------------


@pytest.mark.parametrize("manifest,where", [
    ('{"doc_id": "doc"}\n{"doc_id": \n', "line 2"),
    ('["doc"]\n', "line 1"),
    ('{"group": "x"}\n', "line 1"),
    ('{"doc_id": "../etc/doc"}\n', "line 1"),
    ('{"doc_id": 7}\n', "line 1"),
    ('{"doc_id": "doc", "group": ["a"]}\n', "line 1"),
    ('\ufeff{"doc_id": "nope"}\n', "nope.pdf"),
])
def test_a_bad_manifest_names_the_file_and_line(tmp_path, capsys, manifest, where):
    h = headings_folder(tmp_path / "h", manifest=manifest)
    line = one_error(capsys, "train-levels", "--data", h, "--out", tmp_path / "m.txt", names=(where,))
    assert "manifest.jsonl" in line or where.endswith(".pdf")
    assert not (tmp_path / "m.txt").exists()


# --- blank outline titles ---------------------------------------------------------------------------------------


def test_outline_titles_of_invisible_characters_make_no_heading(tmp_path, capsys):
    b = PDFBuilder(header=None)
    for t in ("Overview", "Results"):
        b.new_page()
        b.heading(t, size=18)
        b.para()
    toc = [[1, "Overview", 1], [1, "\u200b\u200b", 1], [2, "Results", 2], [1, "\ufeff \u2060\u200d", 2]]
    pdf = b.save(tmp_path / "r.pdf", toc=toc)
    rc, out, _ = cli(capsys, "toc", pdf, "--json")
    heads = json.loads(out)["headings"]
    assert rc == 0 and [(h["text"], h["level"]) for h in heads] == [("Overview", 1), ("Results", 1)]


# --- environment variables read as numbers ------------------------------------------------------------------------


def test_embed_threads_that_are_no_number_name_the_variable(monkeypatch):
    from retrievers.embed.encoder import default_threads

    monkeypatch.setenv("STRUCTRAG_EMBED_THREADS", "four")
    with pytest.raises(ConfigError, match="STRUCTRAG_EMBED_THREADS"):
        default_threads()
    monkeypatch.setenv("STRUCTRAG_EMBED_THREADS", "3")
    assert default_threads() == 3
    monkeypatch.delenv("STRUCTRAG_EMBED_THREADS")
    monkeypatch.setenv("OMP_NUM_THREADS", "4,2")  # OpenMP's own syntax: not ours to refuse
    assert default_threads() >= 1


# --- output paths -------------------------------------------------------------------------------------------------


def test_train_ranker_and_eval_refuse_outputs_of_the_wrong_kind(index_dir, tmp_path, capsys):
    queries = write_queries(tmp_path / "q.jsonl")
    folder = tmp_path / "folder"
    folder.mkdir()
    a_file = tmp_path / "a_file"
    a_file.write_text("mine")
    one_error(capsys, "train-ranker", queries, "--index", index_dir, "--out", folder, names=("folder",))
    one_error(capsys, "eval", "retrieval", queries, "--index", index_dir, "--out", a_file, "--no-plots",
              names=("a_file", "--out"))
    one_error(capsys, "eval", "retrieval", queries, "--index", index_dir, "--misses-html", folder, "--no-plots",
              "--out", tmp_path / "ev", names=("is a folder",))
    assert a_file.read_text() == "mine" and list(folder.iterdir()) == []


def test_index_refuses_an_index_folder_under_a_file(tmp_path, capsys):
    pdf = make_report(tmp_path / "r.pdf")
    a_file = tmp_path / "a_file"
    a_file.write_text("mine")
    one_error(capsys, "index", pdf, "--out", a_file / "ix", "--no-dense", names=("a_file", "not a folder"))
    one_error(capsys, "index", pdf, "--out", a_file, "--no-dense", names=("a_file", "not a folder"))
    assert a_file.read_text() == "mine"


def test_levels_refuses_a_folder_as_its_output(tmp_path, capsys):
    ref = tmp_path / "ref.json"
    ref.write_text(json.dumps([{"text": "Item 1. Business", "page": 1}]))
    one_error(capsys, "levels", ref, "-o", tmp_path, names=("is a folder",))


def test_train_outputs_are_checked_before_the_training(tmp_path, capsys):
    ref = tmp_path / "r.corrections.json"
    ref.write_text("{}")
    one_error(capsys, "train-levels", "--also", ref, "--out", tmp_path, names=("is a folder",))


def test_the_demo_cache_named_by_a_file_is_an_error(tmp_path, capsys, monkeypatch):
    taken = tmp_path / "taken"
    taken.write_text("mine")
    monkeypatch.setenv("STRUCTRAG_CACHE", str(taken))
    one_error(capsys, "demo", make_report(tmp_path / "r.pdf"), "anything", "--no-dense", names=("STRUCTRAG_CACHE",))
    assert taken.read_text() == "mine"

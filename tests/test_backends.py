"""VLM / LLM / whole-document predictors against a real OpenAI-compatible server on 127.0.0.1.

Documents are real PDFs made with PyMuPDF (tests/openai_server.build_report_pdf);
reference headings come from their outlines via structrag.headings.outline.locate_outline;
the server (tests/openai_server.py) decodes every request, checks it, and answers
with the true levels, or with an injected fault.
"""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("openai")
pytest.importorskip("PIL")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from openai_server import DecodedRequest, Fault, OpenAIServer, build_report_pdf, levels_by_title  # noqa: E402

from structrag import (BackendError, BackendResponseError, BackendUnreachable, ConfigError, HeadingTree,  # noqa: E402
                       StructragWarning, extract, locate_outline)
from structrag.levels.backends import (  # noqa: E402
    KNOWN_COLOR,
    TARGET_COLOR,
    ChatClient,
    LLMPredictor,
    VLMPredictor,
    WholeDocumentPredictor,
    parse_level_map,
    AnswerError,
)
from structrag.levels import assign_levels, check_levels, make_predictor  # noqa: E402

OUTLINE = [
    (1, "Introduction"), (2, "Scope of the report"), (2, "Method"), (3, "Data sources"), (3, "Sampling"),
    (1, "Results"), (2, "Revenue"), (3, "By segment"), (4, "North region"), (4, "South region"),
    (2, "Costs"), (3, "Staff"), (1, "Outlook"), (2, "Risks"), (2, "Guidance"),
]
TRUTH = {t: lv for lv, t in OUTLINE}
ORDER = {t: i for i, (_, t) in enumerate(OUTLINE)}
ZOOM = 0.5


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("backends") / "report.pdf"
    build_report_pdf(path, OUTLINE, per_page=3)
    doc = extract(path)
    located = locate_outline(doc)
    assert all(x.heading is not None for x in located)
    heads = tuple(replace(x.heading, level=None, level_source=None, confidence=None) for x in located)
    assert [h.text for h in heads] == [t for _, t in OUTLINE]
    return doc, heads


def _count_color(img, box, color, zoom, pad=6):
    """Pixels of exactly ``color`` in a band around ``box`` (points) on ``img``."""
    x0, y0, x1, y1 = (v * zoom for v in box)
    x0, y0 = max(0, int(x0 - pad)), max(0, int(y0 - pad))
    x1, y1 = min(img.width - 1, int(x1 + pad)), min(img.height - 1, int(y1 + pad))
    a = np.asarray(img.crop((x0, y0, x1 + 1, y1 + 1)))
    return int(np.all(a == np.array(color, dtype=a.dtype), axis=-1).sum())


def vlm_check(doc, heads, zoom=ZOOM):
    """The server-side checks of issue 4, on every decoded VLM request."""
    by_title = {h.text: h for h in heads}

    def check(req: DecodedRequest) -> None:
        assert req.targets, "no targets in the prompt"
        assert req.known is not None, "no known-headings list in the prompt"
        titles = [t["title"] for t in req.targets]
        assert [t["id"] for t in req.targets] == [f"T{i + 1}" for i in range(len(titles))]
        first = min(ORDER[t] for t in titles)
        assert [ORDER[t] for t in titles] == list(range(first, first + len(titles))), "targets not consecutive"
        depth = max((lv for lv, _ in OUTLINE[:first]), default=0)
        target_pages = {t["image_id"] for t in req.targets}
        assert len(req.images) <= depth + len(target_pages), (
            f"{len(req.images)} images > depth {depth} + {len(target_pages)} target pages")
        for k in req.known:
            assert ORDER[k["title"]] < first, f"known heading {k['title']!r} is not before the targets"
            assert k["level"] == f"H{TRUTH[k['title']]}", "known level differs from what was answered"
        for t in req.targets:
            h = by_title[t["title"]]
            img = req.images[t["image_id"] - 1]
            assert abs(img.width - doc.page_sizes[h.page][0] * zoom) <= 1, "image not at zoom x page size"
            assert _count_color(img, h.bbox, TARGET_COLOR, zoom) > 20, f"no red box around {h.text!r}"
            assert _count_color(img, h.bbox, KNOWN_COLOR, zoom) == 0
        for k in req.known:
            if k["image_id"] is None:
                continue
            h = by_title[k["title"]]
            img = req.images[k["image_id"] - 1]
            assert _count_color(img, h.bbox, KNOWN_COLOR, zoom) > 20, f"no blue box around {h.text!r}"
            assert _count_color(img, h.bbox, TARGET_COLOR, zoom) == 0

    return check


def _valid_tree(result, doc):
    levels = [h.level for h in result.headings]
    assert check_levels(levels, 0) is None
    tree = HeadingTree.from_headings(result.headings, n_blocks=len(doc.blocks), document=doc.name)
    assert len(tree) == len(OUTLINE)
    return levels


def _vlm(srv, **kw):
    kw.setdefault("zoom", ZOOM)
    kw.setdefault("timeout", 5.0)
    kw.setdefault("max_wait", 0.2)
    return VLMPredictor(base_url=srv.base_url, model="test-vlm", api_key="k", **kw)


# --------------------------------------------------------------------------- parsing

@pytest.mark.parametrize("text,expected", [
    ('{"T1": "H2", "T2": "H3"}', [2, 3]),
    ('```json\n{"T1": "h2", "T2": 3}\n```', [2, 3]),
    ('<think>T1 could be {"T1": "H9"}</think>Sure: {"t1": "Level 2", "T2": "H3"} done.', [2, 3]),
    ('Answer: [{"id": "T1", "level": "H2"}, {"id": "T2", "level": 3}]', [2, 3]),
    ('{"levels": {"T1": "H2", "T2": "H3"}}', [2, 3]),
    ('noise {"x": 1} then {"T1": "H2", "T2": "H3"}', [2, 3]),
])
def test_parse_is_lenient(text, expected):
    got = parse_level_map(text, ["T1", "T2"])
    assert [got["T1"], got["T2"]] == expected


@pytest.mark.parametrize("text,why", [
    ("", "empty"),
    ("I think it is a second-level heading.", "no JSON"),
    ('{"T1": "H2"}', "no level for T2"),
    ('{"T1": "H2", "T2": "H3", "T3": "H1"}', "unknown ids T3"),
    ('{"T1": "H2", "T2": "top"}', "levels must look like"),
    ('{"T1": "H2", "T2": ', "no JSON"),
])
def test_parse_is_strict(text, why):
    with pytest.raises(AnswerError, match=why):
        parse_level_map(text, ["T1", "T2"])


# --------------------------------------------------------------------------- the VLM predictor

def test_vlm_predicts_true_levels_with_bounded_images(report):
    doc, heads = report
    with OpenAIServer(levels_by_title(TRUTH), check=vlm_check(doc, heads)) as srv:
        pred = _vlm(srv)
        res = assign_levels(doc, heads, predictor=pred, memory="recent")
    assert srv.errors == []
    assert _valid_tree(res, doc) == [lv for lv, _ in OUTLINE]
    assert {h.level_source for h in res.headings} == {"vlm"}
    n = len(OUTLINE)
    assert len(srv.requests) == n
    st = pred.stats()
    assert st["calls"] == n and st["failed_calls"] == 0 and st["http_retries"] == 0
    assert st["images"] == sum(len(r.images) for r in srv.requests)
    assert st["max_images_per_call"] == max(len(r.images) for r in srv.requests)
    assert st["prompt_tokens"] > 0 and st["completion_tokens"] > 0
    # every page image rendered once: later uses come from the cache
    assert st["pages_rendered"] == len({h.page for h in heads})
    assert st["render_cache_hits"] == st["images"] - st["pages_rendered"]
    assert res.stats["usage"]["calls"] == n
    assert res.stats["usage"]["images"] == st["images"]
    # the first request knows nothing and is told its heading is H1
    assert srv.requests[0].known == []
    assert "first heading of the document" in srv.requests[0].prompt_text
    assert srv.requests[0].model == "test-vlm"


def test_vlm_page_granularity_sends_groups(report):
    doc, heads = report
    with OpenAIServer(levels_by_title(TRUTH), check=vlm_check(doc, heads)) as srv:
        pred = _vlm(srv)
        res = assign_levels(doc, heads, predictor=pred, granularity="page")
    assert srv.errors == []
    assert _valid_tree(res, doc) == [lv for lv, _ in OUTLINE]
    assert len(srv.requests) == len({h.page for h in heads}) < len(OUTLINE)
    assert max(len(r.targets) for r in srv.requests) > 1


def test_vlm_needs_the_document(report):
    _, heads = report
    with OpenAIServer() as srv:
        with pytest.raises(ConfigError, match="needs the document"):
            assign_levels(None, heads, predictor=_vlm(srv))


def test_llm_text_only_serialises_bboxes(report):
    doc, heads = report
    by_title = {h.text: h for h in heads}

    def check(req):
        assert req.images == [], "the text-only predictor sent images"
        for t in req.targets:
            h = by_title[t["title"]]
            assert t["page"] == h.page + 1
            assert t["bbox"] == [round(v, 1) for v in h.bbox]
        for k in req.known:
            assert k["level"] == f"H{TRUTH[k['title']]}" and "bbox" in k and "page" in k
        assert "Page sizes in points" in req.prompt_text

    with OpenAIServer(levels_by_title(TRUTH), check=check) as srv:
        pred = make_predictor("llm", base_url=srv.base_url, model="test-llm", timeout=5.0)
        assert isinstance(pred, LLMPredictor)
        res = assign_levels(doc, heads, predictor=pred)
    assert srv.errors == []
    assert _valid_tree(res, doc) == [lv for lv, _ in OUTLINE]
    assert {h.level_source for h in res.headings} == {"llm"}
    assert pred.stats()["images"] == 0 and pred.stats()["calls"] == len(OUTLINE)


def test_whole_document_is_one_request(report):
    doc, heads = report
    with OpenAIServer(levels_by_title(TRUTH)) as srv:
        pred = make_predictor("whole-document", base_url=srv.base_url, model="m", timeout=5.0)
        assert isinstance(pred, WholeDocumentPredictor)
        res = assign_levels(doc, heads, predictor=pred)
    assert len(srv.requests) == 1
    assert [t["title"] for t in srv.requests[0].targets] == [t for _, t in OUTLINE]
    assert _valid_tree(res, doc) == [lv for lv, _ in OUTLINE]
    assert res.stats["usage"]["calls"] == 1 and pred.stats()["calls"] == 1


def test_whole_document_missing_ids_are_asked_again_then_fall_back(report):
    doc, heads = report
    with OpenAIServer(levels_by_title(TRUTH)) as srv:
        srv.inject(Fault("missing-id"), Fault("missing-id"), Fault("missing-id"))
        pred = WholeDocumentPredictor(base_url=srv.base_url, model="m", timeout=5.0)
        res = assign_levels(doc, heads, predictor=pred, fallback="rules")
    # three requests (1 + 2 retries), the last heading never answered: fallback for it
    assert len(srv.requests) == 3
    assert pred.stats()["parse_errors"] == 3
    levels = _valid_tree(res, doc)
    assert levels[:-1] == [lv for lv, _ in OUTLINE][:-1]
    assert res.headings[-1].level_source == "fallback"
    assert res.stats["fallback_steps"] == 1 and res.stats["backend_errors"] == 1


def test_unknown_option_is_a_config_error():
    with pytest.raises(ConfigError, match="accepted options"):
        make_predictor("vlm", model="m", zooom=2)
    with pytest.raises(ConfigError, match="model"):
        VLMPredictor(base_url="http://127.0.0.1:9/v1", model="")


def test_client_bounds_concurrency():
    with OpenAIServer() as srv:
        srv.inject(*[Fault("delay", seconds=0.15)] * 6)
        client = ChatClient(base_url=srv.base_url, model="m", max_concurrency=2, timeout=5.0)
        msgs = [{"role": "user", "content": f"{TARGETS_TEXT}"}]
        threads = [threading.Thread(target=client.complete, args=(msgs,)) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert client.usage.calls == 6
    assert srv.max_in_flight == 2


TARGETS_TEXT = 'Headings to assign:\n[{"id": "T1", "title": "x", "image_id": 1}]'


# --------------------------------------------------------------------------- faults

TRUE_LEVELS = [lv for lv, _ in OUTLINE]


@pytest.mark.parametrize("kind", ["invalid-json", "missing-id", "unknown-id", "fenced"])
def test_unparseable_answer_is_asked_again(report, kind):
    doc, heads = report
    with OpenAIServer(levels_by_title(TRUTH), check=vlm_check(doc, heads)) as srv:
        srv.inject(*[Fault("fenced")] * 3, Fault(kind))  # the 4th request gets the fault
        pred = _vlm(srv)
        res = assign_levels(doc, heads, predictor=pred, fallback="rules")
    assert srv.errors == []
    assert _valid_tree(res, doc) == TRUE_LEVELS
    st = pred.stats()
    extra = 0 if kind == "fenced" else 1
    assert len(srv.requests) == len(OUTLINE) + extra
    assert st["calls"] == len(srv.requests) and st["parse_errors"] == extra
    assert res.stats["usage"]["calls"] == len(srv.requests)
    if extra:
        retried = srv.requests[4]
        assert "previous answer was rejected" in retried.prompt_text
        assert retried.target_ids == srv.requests[3].target_ids
    assert res.stats["fallback_steps"] == 0 and res.stats["projected"] == 0


@pytest.mark.parametrize("kind", ["out-of-range", "skip-level"])
def test_invalid_levels_are_retried_with_feedback(report, kind):
    doc, heads = report
    with OpenAIServer(levels_by_title(TRUTH)) as srv:
        srv.inject(*[Fault("fenced")] * 6, Fault(kind))  # heading 7 ("Revenue", H2 after H1)
        pred = _vlm(srv)
        res = assign_levels(doc, heads, predictor=pred, fallback="rules")
    assert _valid_tree(res, doc) == TRUE_LEVELS
    assert len(srv.requests) == len(OUTLINE) + 1
    assert res.stats["retries"] == 1 and res.stats["invalid_answers"] == 1
    assert "more than one below" in srv.requests[7].prompt_text
    assert res.stats["usage"]["calls"] == pred.stats()["calls"] == len(OUTLINE) + 1


def test_single_heading_still_invalid_is_projected(report):
    doc, heads = report
    with OpenAIServer(levels_by_title(TRUTH)) as srv:
        srv.inject(*[Fault("fenced")] * 6, *[Fault("out-of-range")] * 3)
        pred = _vlm(srv)
        res = assign_levels(doc, heads, predictor=pred, fallback="rules")
    levels = _valid_tree(res, doc)
    assert len(srv.requests) == len(OUTLINE) + 2  # 1 + max_retries for that step
    assert res.stats["projected"] == 1 and res.stats["fallback_steps"] == 0
    assert res.headings[6].level_source == "projected"
    assert levels[6] == 2  # min(12, previous level 1 + 1)
    assert levels[:6] == TRUE_LEVELS[:6]


def test_group_still_invalid_falls_back(report):
    doc, heads = report
    with OpenAIServer(levels_by_title(TRUTH)) as srv:
        srv.inject(Fault("fenced"), *[Fault("skip-level")] * 3)  # the second page's group
        pred = _vlm(srv)
        res = assign_levels(doc, heads, predictor=pred, granularity="page", fallback="rules")
    _valid_tree(res, doc)
    n_pages = len({h.page for h in heads})
    assert len(srv.requests) == n_pages + 2
    assert res.stats["fallback_steps"] == 1
    second = [h for h in res.headings if h.page == heads[3].page]
    assert {h.level_source for h in second} == {"fallback"}
    assert res.stats["usage"]["calls"] == pred.stats()["calls"] == n_pages + 2


@pytest.mark.parametrize("fault,attr", [
    (Fault("status", status=429, retry_after=0.05), "wait"),
    (Fault("status", status=503, retry_after=0), "wait"),
    (Fault("delay", seconds=1.5), "timeout"),
    (Fault("drop"), "drop"),
])
def test_transient_http_failures_are_retried(report, fault, attr):
    doc, heads = report
    with OpenAIServer(levels_by_title(TRUTH)) as srv:
        srv.inject(*[Fault("fenced")] * 2, fault)
        pred = _vlm(srv, timeout=0.6)
        res = assign_levels(doc, heads, predictor=pred, fallback="rules")
    assert _valid_tree(res, doc) == TRUE_LEVELS
    st = pred.stats()
    # a timed-out request is still answered by the server, too late for the client
    assert len(srv.requests) == len(OUTLINE) + (1 if attr == "timeout" else 0)
    assert st["calls"] == len(OUTLINE)
    assert st["http_retries"] == 1 and st["failed_calls"] == 0
    assert srv.http_attempts == len(OUTLINE) + 1
    if attr == "wait" and fault.retry_after:
        assert st["wait_s"] >= fault.retry_after
    assert res.stats["fallback_steps"] == 0 and res.stats["usage"]["http_retries"] == 1


def test_persistent_server_error_falls_back_for_that_step(report):
    doc, heads = report
    with OpenAIServer(levels_by_title(TRUTH)) as srv:
        srv.inject(*[Fault("fenced")] * 4, *[Fault("status", status=500, retry_after=0)] * 3)
        pred = _vlm(srv, max_http_retries=2)
        res = assign_levels(doc, heads, predictor=pred, fallback="rules")
    levels = _valid_tree(res, doc)
    assert res.headings[4].level_source == "fallback"
    assert res.stats["fallback_steps"] == 1 and res.stats["backend_errors"] == 1
    assert levels[:4] == TRUE_LEVELS[:4]
    st = pred.stats()
    assert st["failed_calls"] == 1 and st["http_retries"] == 2 + 0
    # the driver's per-document usage counts the failed step too, as the predictor does
    assert res.stats["usage"]["failed_calls"] == 1 and res.stats["usage"]["http_retries"] == st["http_retries"]
    assert st["calls"] == len(srv.requests) == len(OUTLINE) - 1
    assert srv.http_attempts == len(OUTLINE) - 1 + 3


def test_fatal_error_disables_the_backend_for_the_document(report):
    doc, heads = report
    with OpenAIServer(levels_by_title(TRUTH)) as srv:
        srv.inject(*[Fault("fenced")] * 5, Fault("status", status=401))
        pred = _vlm(srv)
        res = assign_levels(doc, heads, predictor=pred, fallback="rules")
    _valid_tree(res, doc)
    assert srv.http_attempts == 6  # nothing sent after the 401
    assert [h.level_source for h in res.headings[5:]] == ["fallback"] * (len(OUTLINE) - 5)
    st = pred.stats()
    assert "401" in st["disabled"]
    assert st["failed_calls"] == 1 and st["skipped_calls"] == len(OUTLINE) - 6
    assert res.stats["fallback_steps"] == len(OUTLINE) - 5


def test_dead_server_costs_a_bounded_number_of_attempts(report):
    doc, heads = report
    with OpenAIServer() as srv:
        url = srv.base_url
    pred = VLMPredictor(base_url=url, model="m", zoom=ZOOM, timeout=1.0, max_http_retries=1, max_wait=0.01,
                        max_consecutive_failures=3)
    with pytest.warns(StructragWarning, match=f"{len(OUTLINE)} of {len(OUTLINE)} level steps fell back"):
        res = assign_levels(doc, heads, predictor=pred, fallback="rules")
    _valid_tree(res, doc)
    st = pred.stats()
    # a server that never answered and refuses the connection: one request and one quick retry, then
    # no more requests for the document (the connection cannot succeed later either)
    assert st["failed_calls"] == 1 and st["http_retries"] == 1
    assert st["skipped_calls"] == len(OUTLINE) - 1
    assert {h.level_source for h in res.headings} == {"fallback"}
    with pytest.raises(BackendUnreachable, match="cannot reach the model server"):
        assign_levels(doc, heads, predictor=VLMPredictor(base_url=url, model="m", zoom=ZOOM), fallback="rules",
                      unreachable="stop")


def test_without_fallback_the_error_propagates_and_the_checkpoint_resumes(report, tmp_path):
    doc, heads = report
    ckpt = tmp_path / "run.ckpt"
    with OpenAIServer(levels_by_title(TRUTH)) as srv:
        srv.inject(*[Fault("fenced")] * 7, Fault("status", status=401))
        with pytest.raises(BackendError, match="401"):
            assign_levels(doc, heads, predictor=_vlm(srv), checkpoint=ckpt)
    lines = ckpt.read_text().splitlines()
    assert len(lines) == 1 + 7  # header + the 7 completed steps
    with OpenAIServer(levels_by_title(TRUTH), check=vlm_check(doc, heads)) as srv2:
        pred = _vlm(srv2)
        res = assign_levels(doc, heads, predictor=pred, checkpoint=ckpt)
    assert srv2.errors == []
    assert len(srv2.requests) == len(OUTLINE) - 7
    assert srv2.requests[0].targets[0]["title"] == OUTLINE[7][1]
    assert _valid_tree(res, doc) == TRUE_LEVELS
    assert res.stats["resumed_steps"] == 7
    assert res.stats["usage"]["calls"] == len(OUTLINE)  # the checkpoint kept the first run's accounting


def test_response_error_is_a_backend_error():
    # the driver falls back on BackendError; unusable answers must take that path too
    assert issubclass(BackendResponseError, BackendError)


# --------------------------------------------------------------------------- options and helpers

def test_retry_after_forms():
    from structrag.levels.backends._client import _retry_after

    assert _retry_after({"retry-after": "2"}) == 2.0
    assert _retry_after({"retry-after-ms": "150", "retry-after": "9"}) == 0.15
    assert _retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # a date in the past
    assert _retry_after({"retry-after": "soon"}) is None
    assert _retry_after({}) is None


def test_jpeg_and_zoom_options_shape_the_images(report):
    doc, heads = report
    with OpenAIServer(levels_by_title(TRUTH)) as srv:
        pred = VLMPredictor(base_url=srv.base_url, model="m", zoom=0.3, image_format="jpeg", timeout=5.0)
        res = assign_levels(doc, heads[:4], predictor=pred)
    assert [h.level for h in res.headings] == TRUE_LEVELS[:4]
    url = srv.requests[0].body["messages"][1]["content"][2]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,")
    w, h = srv.requests[0].image_sizes[0]
    assert abs(w - doc.page_sizes[0][0] * 0.3) <= 1 and abs(h - doc.page_sizes[0][1] * 0.3) <= 1
    with pytest.raises(ConfigError, match="zoom"):
        VLMPredictor(base_url=srv.base_url, model="m", zoom=0)
    with pytest.raises(ConfigError, match="image_format"):
        VLMPredictor(base_url=srv.base_url, model="m", image_format="gif")


def test_real_document_context_stays_bounded(shared_data):
    """The first 60 outline headings of a 6-level 10-Q: memory images <= depth + target pages."""
    doc_id = "JPMorgan_Chase_2023_Q2_10_Q"
    toc = json.loads((shared_data / "headings" / f"{doc_id}.toc.json").read_text())
    document = extract(shared_data / "headings" / f"{doc_id}.pdf", max_pages=60)
    from structrag import OutlineEntry
    from structrag.levels import project_levels

    entries = [OutlineEntry(int(lv), str(t), int(p) - 1) for lv, t, p in toc["toc"] if int(p) <= 60]
    heads = [x.heading for x in locate_outline(document, entries) if x.heading is not None]
    ref = list(project_levels([h.level for h in heads], 0))
    heads = [replace(h, level=None, level_source=None) for h in heads]
    from openai_server import levels_in_order

    depth_before = [max(ref[:i], default=0) for i in range(len(ref))]

    def check(req):
        i = req.index
        assert len(req.images) <= depth_before[i] + 1, f"step {i}: {len(req.images)} images"

    # answered per title: headings a document rule places (the contents page's title) are not asked
    with OpenAIServer(levels_in_order(ref, [h.text for h in heads]), check=check) as srv:
        pred = VLMPredictor(base_url=srv.base_url, model="m", zoom=0.2, timeout=30.0)
        res = assign_levels(document, heads, predictor=pred)
    assert srv.errors == []
    assert [h.level for h in res.headings] == ref
    assert max(ref) >= 4 and len(ref) >= 20


def test_vlm_with_fixed_contents_levels(report):
    """Headings whose level the printed contents gives are not asked; they are known anchors in the memory."""
    doc, heads = report
    fixed = tuple(replace(h, level=TRUTH[h.text], level_source="contents", confidence=1.0, source="contents")
                  if TRUTH[h.text] == 1 else h for h in heads)
    with OpenAIServer(levels_by_title(TRUTH), check=vlm_check(doc, heads)) as srv:
        res = assign_levels(doc, fixed, predictor=_vlm(srv))
    assert srv.errors == []
    assert _valid_tree(res, doc) == [lv for lv, _ in OUTLINE]
    asked = [t["title"] for r in srv.requests for t in r.targets or []]
    assert asked == [t for lv, t in OUTLINE if lv != 1]
    # the first request already knows the fixed first chapter, at H1
    assert any(k["title"] == "Introduction" and str(k["level"]).endswith("1") for k in srv.requests[0].known)
    assert [h.level_source for h in res.headings if TRUTH[h.text] == 1] == ["contents"] * 3
    assert res.stats["fixed"] == 3 and res.stats["fixed_projected"] == 0

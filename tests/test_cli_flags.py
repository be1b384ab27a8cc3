"""One meaning per flag: --backend-model, --level-model, --embed-model; there is no --model.

Each flag is checked end to end (a real loopback server, a real LightGBM model
that changes the levels, a real index).  ``--model`` (the server model, the
LightGBM file or the embedding model, depending on the command, before any
release) is refused on every command.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pdfgen import numbered_report  # noqa: E402

from structrag.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    d = tmp_path_factory.mktemp("flags")
    pdf = numbered_report(d / "report.pdf", chapters=2, sections=2, subsections=1, with_toc=True)
    from structrag import extract, locate_outline

    ref = [{"text": x.heading.text, "page": x.heading.page + 1, "bbox": list(x.heading.bbox)}
           for x in locate_outline(extract(pdf))]
    assert len(ref) == 10
    (d / "reference.json").write_text(json.dumps(ref))
    return d, pdf, d / "reference.json"


def _numbered_levels(ref_path):
    return [h["text"].split()[0].count(".") + 1 for h in json.loads(Path(ref_path).read_text())]  # "1.2" -> 2


@pytest.fixture(scope="module")
def flat_model(tmp_path_factory):
    """A real LightGBM level model that always prefers the first slot: every heading at level 1."""
    lgb = pytest.importorskip("lightgbm")
    from structrag.levels.features import FEATURE_NAMES

    rng = np.random.default_rng(0)
    X = rng.random((400, len(FEATURE_NAMES)))
    k1 = FEATURE_NAMES.index("k_is_one")
    X[:, k1] = rng.integers(0, 2, 400)
    b = lgb.train({"objective": "binary", "verbosity": -1, "min_data_in_leaf": 5},
                  lgb.Dataset(X, label=X[:, k1], feature_name=list(FEATURE_NAMES)), num_boost_round=10)
    path = tmp_path_factory.mktemp("model") / "flat.txt"
    b.save_model(str(path))
    return path


def _levels(capsys, argv):
    rc = main(argv)
    out = capsys.readouterr()
    assert rc == 0, out.err
    return [h["level"] for h in json.loads(out.out)], out.err


# --- levels: --level-model ------------------------------------------------
def test_levels_level_model_is_used(report, flat_model, capsys):
    _, pdf, ref = report
    shipped, err = _levels(capsys, ["levels", str(ref), "--pdf", str(pdf)])
    assert shipped == _numbered_levels(ref) == [1, 2, 3, 2, 3] * 2
    flat, err = _levels(capsys, ["levels", str(ref), "--pdf", str(pdf), "--level-model", str(flat_model)])
    assert flat == [1] * 10


def _refused(capsys, argv):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert "unrecognized arguments: --model" in capsys.readouterr().err


def test_levels_refuses_model(report, flat_model, capsys):
    _, pdf, ref = report
    _refused(capsys, ["levels", str(ref), "--pdf", str(pdf), "--model", str(flat_model)])


def test_level_model_needs_the_learned_predictor(report, flat_model, capsys):
    _, pdf, ref = report
    assert main(["levels", str(ref), "--pdf", str(pdf), "--level-model", str(flat_model), "--predictor", "rules"]) == 2
    assert "--level-model is only used with --predictor learned" in capsys.readouterr().err


def test_toc_takes_level_model_too(report, flat_model, capsys, tmp_path):
    _, pdf, _ = report
    assert main(["toc", str(pdf), "--ignore-outline", "--json", "--level-model", str(flat_model)]) == 0
    heads = json.loads(capsys.readouterr().out)["headings"]
    assert heads and {h["level"] for h in heads} == {1}
    assert main(["toc", str(pdf), "--ignore-outline", "--level-model", str(tmp_path / "missing.txt")]) == 2
    assert "missing.txt" in capsys.readouterr().err


# --- toc: --backend-model ----------------------------------------------------
def _served_model(argv):
    pytest.importorskip("openai")
    pytest.importorskip("PIL")
    from openai_server import OpenAIServer
    from test_backends_cli import _policy

    with OpenAIServer(_policy) as srv:
        rc = main(argv + ["--base-url", srv.base_url, "--fallback", "rules"])
    return rc, {r.model for r in srv.requests}


def test_toc_backend_model_reaches_the_server(report, capsys):
    _, pdf, _ = report
    rc, served = _served_model(["toc", str(pdf), "--ignore-outline", "--json", "--backend", "llm",
                                "--backend-model", "srv-m"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert served == {"srv-m"}


def test_toc_refuses_model(report, capsys):
    _, pdf, _ = report
    _refused(capsys, ["toc", str(pdf), "--backend", "llm", "--model", "srv-m"])


# --- index: --embed-model -------------------------------------------------------
@pytest.fixture(scope="module")
def lexical_index(report, tmp_path_factory):
    d, pdf, _ = report
    out = tmp_path_factory.mktemp("idx") / "index"
    assert main(["index", str(pdf), "--out", str(out), "--no-dense", "--quiet"]) == 0
    return pdf, out


def test_index_embed_model_reaches_the_index(lexical_index, capsys):
    pdf, out = lexical_index
    capsys.readouterr()
    # the index has no embeddings: naming a model for it is refused, which shows the flag got there
    assert main(["index", str(pdf), "--out", str(out), "--no-dense", "--embed-model", "some/embedder"]) == 2
    assert "not 'some/embedder'" in capsys.readouterr().err


def test_index_refuses_model(lexical_index, capsys):
    pdf, out = lexical_index
    _refused(capsys, ["index", str(pdf), "--out", str(out), "--no-dense", "--model", "some/embedder"])


def test_help_shows_the_three_names_and_no_model(capsys):
    for cmd, new in (("toc", ["--backend-model", "--level-model"]), ("levels", ["--backend-model", "--level-model"]),
                     ("index", ["--embed-model"])):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        text = capsys.readouterr().out
        assert all(n in text for n in new)
        assert "--model " not in text and "--model," not in text

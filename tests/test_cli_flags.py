"""One meaning per flag: --backend-model, --level-model, --embed-model; the old --model still works, with a warning.

``--model`` was the server model on ``toc``, the LightGBM file on ``levels``
and the embedding model on ``index``.  Each new flag is checked end to end
(a real loopback server, a real LightGBM model that changes the levels, a real
index), the old spelling likewise plus its warning, and giving both spellings
with different values must fail with a message naming both.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pdfgen import numbered_report  # noqa: E402

from structrag.cli import build_parser, main  # noqa: E402
from structrag.errors import DeprecatedOptionWarning, StructragWarning  # noqa: E402


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


# --- levels: --level-model (was --model) ------------------------------------------------
def test_levels_level_model_is_used(report, flat_model, capsys):
    _, pdf, ref = report
    shipped, err = _levels(capsys, ["levels", str(ref), "--pdf", str(pdf)])
    assert shipped == _numbered_levels(ref) == [1, 2, 3, 2, 3] * 2 and "deprecated" not in err
    flat, err = _levels(capsys, ["levels", str(ref), "--pdf", str(pdf), "--level-model", str(flat_model)])
    assert flat == [1] * 10 and "deprecated" not in err


def test_levels_old_model_spelling_still_works_and_warns_once(report, flat_model, capsys):
    _, pdf, ref = report
    flat, err = _levels(capsys, ["levels", str(ref), "--pdf", str(pdf), "--model", str(flat_model),
                                 "--model", str(flat_model)])
    assert flat == [1] * 10
    lines = [line for line in err.splitlines() if "deprecated" in line]
    assert len(lines) == 1
    assert lines[0].startswith("structrag: warning: --model is deprecated in 'structrag levels': use --level-model")


def test_levels_both_spellings_must_agree(report, flat_model, capsys):
    _, pdf, ref = report
    with pytest.raises(SystemExit) as e:
        main(["levels", str(ref), "--model", str(flat_model), "--level-model", "other.txt"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--model" in err and "--level-model" in err and "different values" in err
    # the same value both ways is fine (and still warns about the old spelling)
    flat, err = _levels(capsys, ["levels", str(ref), "--pdf", str(pdf), "--model", str(flat_model),
                                 "--level-model", str(flat_model)])
    assert flat == [1] * 10 and "use --level-model" in err


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


# --- toc: --backend-model (was --model) ----------------------------------------------------
def _served_model(argv):
    pytest.importorskip("openai")
    pytest.importorskip("PIL")
    from openai_server import OpenAIServer
    from test_backends_cli import _policy

    with OpenAIServer(_policy) as srv:
        rc = main(argv + ["--base-url", srv.base_url, "--fallback", "rules"])
    return rc, {r.model for r in srv.requests}


@pytest.mark.parametrize("flag", ["--backend-model", "--model"])
def test_toc_backend_model_both_spellings(report, capsys, flag):
    _, pdf, _ = report
    rc, served = _served_model(["toc", str(pdf), "--ignore-outline", "--json", "--backend", "llm", flag, "srv-m"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert served == {"srv-m"}
    warned = [line for line in err.splitlines() if "deprecated" in line]
    if flag == "--model":
        assert warned == ["structrag: warning: --model is deprecated in 'structrag toc': use --backend-model "
                          "(the model name on the server); --model will be removed"]
    else:
        assert warned == []


def test_toc_backend_model_conflict_and_the_python_warning(report, capsys):
    _, pdf, _ = report
    with pytest.raises(SystemExit) as e:
        main(["toc", str(pdf), "--backend-model", "a", "--model", "b"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--backend-model 'a' and --model 'b'" in err and "different values" in err
    with pytest.warns(DeprecatedOptionWarning, match="use --backend-model") as rec:
        args = build_parser().parse_args(["toc", str(pdf), "--model", "x"])
    assert args.backend_model == "x"
    assert issubclass(rec[0].category, StructragWarning) and issubclass(rec[0].category, FutureWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new spelling warns nothing
        assert build_parser().parse_args(["toc", str(pdf), "--backend-model", "y"]).backend_model == "y"


def test_levels_backend_model_has_no_old_spelling(report):
    _, _, ref = report
    # on `levels`, --model was the LightGBM file: it must not turn into the server model
    with pytest.warns(DeprecatedOptionWarning, match="use --level-model"):
        args = build_parser().parse_args(["levels", str(ref), "--model", "m.txt", "--backend-model", "srv"])
    assert args.level_model == "m.txt" and args.backend_model == "srv"


# --- index: --embed-model (only) --------------------------------------------------------------
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


def test_index_has_no_old_model_spelling(lexical_index, capsys):
    """``index --model`` was never released: it is not accepted (no deprecation shim)."""
    pdf, out = lexical_index
    with pytest.raises(SystemExit) as e:
        main(["index", str(pdf), "--out", str(out), "--model", "a"])
    assert e.value.code == 2
    assert "--model" in capsys.readouterr().err


def test_help_shows_only_the_new_names(capsys):
    for cmd, new in (("toc", ["--backend-model", "--level-model"]), ("levels", ["--backend-model", "--level-model"]),
                     ("index", ["--embed-model"])):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        text = capsys.readouterr().out
        assert all(n in text for n in new)
        assert "--model " not in text and "--model," not in text

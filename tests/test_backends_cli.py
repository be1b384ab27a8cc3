"""`structrag toc --backend vlm|llm|whole-document` against a real loopback server.

Includes the resumable run: a real SIGINT mid-document (sent while a request is
in flight), then a rerun with the same checkpoint that continues from there.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("openai")
pytest.importorskip("PIL")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from openai_server import OpenAIServer, build_report_pdf  # noqa: E402

from structrag.cli import main  # noqa: E402

OUTLINE = [
    (1, "Introduction"), (2, "Scope of the report"), (2, "Method"), (3, "Data sources"), (3, "Sampling"),
    (1, "Results"), (2, "Revenue"), (3, "By segment"), (4, "North region"), (2, "Costs"), (1, "Outlook"),
]
TRUTH = {t: lv for lv, t in OUTLINE}
REPO = Path(__file__).resolve().parents[1]


def _policy(req):
    # detected titles are the printed ones; unknown text gets H1 (and would show in the tree)
    return {t["id"]: TRUTH.get(t["title"], 1) for t in req.targets or []}


@pytest.fixture(scope="module")
def pdf(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "report.pdf"
    build_report_pdf(path, OUTLINE)
    return path


def _toc_json(capsys, argv):
    rc = main(argv)
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out), out.err


@pytest.mark.parametrize("backend,calls", [("vlm", len(OUTLINE)), ("llm", len(OUTLINE)), ("whole-document", 1)])
def test_toc_with_a_backend_reports_its_accounting(pdf, capsys, backend, calls):
    with OpenAIServer(_policy) as srv:
        data, _ = _toc_json(capsys, ["toc", str(pdf), "--ignore-outline", "--json", "--stats", "--backend", backend,
                                     "--base-url", srv.base_url, "--backend-model", "served-model", "--zoom", "0.4",
                                     "--fallback", "rules"])
    assert [(h["level"], h["text"]) for h in data["headings"]] == OUTLINE
    lv = data["stats"]["levels"]
    assert lv["predictor"] == backend
    assert lv["usage"]["calls"] == calls == len(srv.requests)
    assert lv["usage"]["images"] == sum(len(r.images) for r in srv.requests)
    assert (lv["usage"]["images"] > 0) == (backend == "vlm")
    assert {r.model for r in srv.requests} == {"served-model"}


def test_environment_variables_configure_the_backend(pdf, capsys, monkeypatch):
    with OpenAIServer(_policy) as srv:
        monkeypatch.setenv("STRUCTRAG_BASE_URL", srv.base_url)
        monkeypatch.setenv("STRUCTRAG_MODEL", "env-model")
        monkeypatch.setenv("STRUCTRAG_API_KEY", "sk-env")
        data, _ = _toc_json(capsys, ["toc", str(pdf), "--ignore-outline", "--json", "--backend", "llm",
                                     "--fallback", "rules"])
    assert [(h["level"], h["text"]) for h in data["headings"]] == OUTLINE
    assert {r.model for r in srv.requests} == {"env-model"}


def test_missing_model_is_a_clear_error(pdf, capsys, monkeypatch):
    monkeypatch.delenv("STRUCTRAG_MODEL", raising=False)
    rc = main(["toc", str(pdf), "--ignore-outline", "--backend", "vlm", "--base-url", "http://127.0.0.1:9/v1"])
    err = capsys.readouterr().err
    assert rc == 2 and "--backend-model" in err and "STRUCTRAG_MODEL" in err


def test_missing_llm_extra_names_the_install_command(pdf):
    code = (
        "import sys; sys.modules['openai'] = None\n"  # as if the extra were not installed
        "from structrag.cli import main\n"
        f"sys.exit(main(['toc', {str(pdf)!r}, '--ignore-outline', '--backend', 'vlm', '--backend-model', 'm']))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert p.returncode == 2
    assert 'pip install "structrag[llm]"' in p.stderr


def test_ctrl_c_mid_document_then_rerun_continues(pdf, tmp_path):
    ckpt = tmp_path / "levels.ckpt"
    holder: dict = {}

    def interrupting(req):
        if req.index == 4 and "proc" in holder:
            holder["proc"].send_signal(signal.SIGINT)  # Ctrl-C while this request is in flight
            time.sleep(1.0)
        return _policy(req)

    argv = [sys.executable, "-m", "structrag.cli", "toc", str(pdf), "--ignore-outline", "--json", "--stats",
            "--backend", "vlm", "--zoom", "0.4", "--backend-model", "m", "--fallback", "none", "--checkpoint", str(ckpt)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with OpenAIServer(interrupting) as srv:
        # a shell starts background jobs with SIGINT ignored, and children inherit that: give the
        # child the default disposition so that Python installs its KeyboardInterrupt handler
        proc = subprocess.Popen(argv + ["--base-url", srv.base_url], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=REPO, env=env,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        holder["proc"] = proc
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    done = ckpt.read_text().splitlines()[1:]
    assert len(done) == 4  # steps 0..3 completed; the interrupted fifth is redone
    assert [json.loads(x)["levels"] for x in done] == [[1], [2], [2], [3]]

    with OpenAIServer(_policy) as srv2:
        p = subprocess.run(argv + ["--base-url", srv2.base_url], capture_output=True, text=True, cwd=REPO,
                           env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert [(h["level"], h["text"]) for h in data["headings"]] == OUTLINE
    assert len(srv2.requests) == len(OUTLINE) - 4
    assert srv2.requests[0].targets[0]["title"] == OUTLINE[4][1]
    lv = data["stats"]["levels"]
    assert lv["resumed_steps"] == 4
    assert lv["usage"]["calls"] == len(OUTLINE)



def _closed_port() -> int:
    import socket

    with socket.socket() as s:  # a port nothing listens on: the connection is refused
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("url", ["http://127.0.0.1:{port}/v1", "http://no-such-host.invalid/v1"])
def test_a_server_that_is_not_there_stops_the_run_at_once(pdf, url):
    url = url.format(port=_closed_port())
    argv = [sys.executable, "-m", "structrag.cli", "toc", str(pdf), "--ignore-outline", "--backend", "vlm",
            "--base-url", url, "--backend-model", "m"]
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=60)
    took = time.perf_counter() - t0
    assert p.returncode == 2 and p.stdout == ""
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, p.stderr  # one line: where, and the fix
    assert url in lines[0] and "cannot reach the model server" in lines[0] and "--fallback" in lines[0]
    assert took < 20, took


def test_an_explicit_fallback_predicts_offline_and_says_so(pdf, capsys):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    data, err = _toc_json(capsys, ["toc", str(pdf), "--ignore-outline", "--json", "--backend", "vlm",
                                   "--base-url", url, "--backend-model", "m", "--fallback", "rules"])
    assert len(data["headings"]) == len(OUTLINE)
    assert {h["level_source"] for h in data["headings"]} <= {"fallback", "projected", "logic"}
    assert "level steps fell back to the offline 'rules' predictor" in err and "server errors" in err


def test_steps_the_server_cannot_answer_fall_back_with_counts_on_stderr(pdf, capsys):
    from openai_server import Fault

    with OpenAIServer(_policy) as srv:
        srv.inject(Fault("status", status=500), Fault("status", status=500), Fault("status", status=500),
                   Fault("status", status=500), Fault("status", status=500))  # the first request's every retry
        data, err = _toc_json(capsys, ["toc", str(pdf), "--ignore-outline", "--json", "--backend", "llm",
                                       "--base-url", srv.base_url, "--backend-model", "m"])
    assert [h["level_source"] for h in data["headings"]].count("fallback") == 1
    assert "1 of 11 level steps fell back" in err and "1 server errors" in err

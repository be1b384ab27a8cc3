"""Command-line options of the model-server backends, shared by ``structrag toc`` and ``levels``.

:func:`add_backend_arguments` adds ``--backend offline|vlm|llm|whole-document``,
``--base-url``, ``--backend-model`` (on ``toc`` also by its old name ``--model``,
deprecated; on ``levels`` ``--model`` was the LightGBM file, now
``--level-model``), ``--api-key``, ``--timeout``, ``--max-concurrency``,
``--zoom``, ``--image-format``, ``--fallback`` (and ``--stats``,
``--granularity``, ``--checkpoint`` where the command has not defined them);
:func:`predictor_from_args` turns them into the keyword arguments of
:func:`structrag.pipeline.parse_pdf` / :func:`structrag.levels.assign_levels`.
Defaults come from the environment: ``STRUCTRAG_BACKEND``,
``STRUCTRAG_BASE_URL`` (or ``OPENAI_BASE_URL``), ``STRUCTRAG_MODEL``,
``STRUCTRAG_API_KEY`` (or ``OPENAI_API_KEY``).  Nothing here imports
``openai`` until a model backend is chosen.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..errors import ConfigError, ModelError

__all__ = ["add_backend_arguments", "predictor_from_args", "BACKENDS"]

BACKENDS = ("offline", "vlm", "llm", "whole-document")


def _has(p: argparse.ArgumentParser, option: str) -> bool:
    return option in p._option_string_actions


def _positive_float(value: str) -> float:
    try:
        v = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value}")
    return v


def _positive_int(value: str) -> int:
    try:
        v = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return v


def add_backend_arguments(p: argparse.ArgumentParser) -> None:
    """Add the backend options to ``p`` (options ``p`` already has are left alone)."""
    g = p.add_argument_group(
        "model-server backend",
        "Predict levels with a vision-language model (vlm: page images with the heading boxes drawn) or a "
        "text LLM (llm) on any OpenAI-compatible server (vLLM, Ollama, hosted APIs), with the level-wise "
        "memory; whole-document sends every heading in one prompt (the baseline).",
    )
    env_backend = os.environ.get("STRUCTRAG_BACKEND", "offline")
    if not _has(p, "--backend"):
        g.add_argument("--backend", choices=BACKENDS, default=env_backend if env_backend in BACKENDS else "offline",
                       help="offline (default; the --predictor), vlm, llm or whole-document "
                            "[env STRUCTRAG_BACKEND]")
    if not _has(p, "--base-url"):
        g.add_argument("--base-url", default=None, metavar="URL",
                       help="server's OpenAI-compatible API root, e.g. http://localhost:8000/v1 (vLLM) or "
                            "http://localhost:11434/v1 (Ollama) [env STRUCTRAG_BASE_URL, OPENAI_BASE_URL]")
    if not _has(p, "--backend-model"):
        from ..cli_flags import add_renamed_option

        # `toc` spelled it --model (kept, deprecated); on `levels` --model was the LightGBM file
        add_renamed_option(g, "--backend-model", old=() if _has(p, "--model") else ("--model",), old_parser=p,
                           dest="backend_model", metavar="NAME", meaning="the model name on the server",
                           help="model name as the server knows it, e.g. Qwen/Qwen2.5-VL-7B-Instruct "
                                "[env STRUCTRAG_MODEL]")
    if not _has(p, "--api-key"):
        g.add_argument("--api-key", default=None,
                       help="API key (local servers need none) [env STRUCTRAG_API_KEY, OPENAI_API_KEY]")
    if not _has(p, "--timeout"):
        g.add_argument("--timeout", type=_positive_float, default=120.0, metavar="S",
                       help="seconds to wait for one answer (default 120)")
    if not _has(p, "--max-concurrency"):
        g.add_argument("--max-concurrency", type=_positive_int, default=4, metavar="N",
                       help="requests in flight at most (default 4)")
    if not _has(p, "--zoom"):
        g.add_argument("--zoom", type=_positive_float, default=1.0,
                       help="vlm: page images at ZOOM x the page size in points (1 = 72 dpi, the paper's setting)")
    if not _has(p, "--image-format"):
        g.add_argument("--image-format", choices=("png", "jpeg"), default="png",
                       help="vlm: image encoding (png: lossless, default; jpeg: smaller requests)")
    if not _has(p, "--fallback"):
        g.add_argument("--fallback", default=None, metavar="PREDICTOR",
                       help="offline predictor for a step the server cannot answer (default: the --predictor, "
                            "or rules if it is unavailable); 'none' to stop with an error instead (the "
                            "--checkpoint keeps the work)")
    if not _has(p, "--granularity"):
        from ..cli import _granularity

        g.add_argument("--granularity", type=_granularity, default="heading",
                       help="targets per step: heading (default), page, or N pages")
    if not _has(p, "--checkpoint"):
        g.add_argument("--checkpoint", default=None,
                       help="file recording predicted levels as they come; a rerun continues from it")
    if not _has(p, "--stats"):
        g.add_argument("--stats", action="store_true",
                       help="print the accounting: calls, images, tokens, retries, projections, fallbacks")


def _fallback(args: argparse.Namespace, model_path: Any = None):
    """The offline predictor (an instance, built once) answering the steps the server cannot."""
    from ..levels import make_predictor

    name = getattr(args, "fallback", None)
    if name is not None and name.strip().lower() == "none":
        return None
    explicit = name is not None
    if name is None:
        name = getattr(args, "predictor", None) or "learned"
        if isinstance(name, str) and name.strip().lower() in BACKENDS[1:]:
            name = "rules"
    if model_path is not None:  # --level-model: for the learned fallback only
        if name.strip().lower() != "learned":
            raise ConfigError(f"--level-model is for the learned predictor, but the fallback is {name!r}",
                              hint="drop --level-model, or use --fallback learned")
        return make_predictor(name, model_path=model_path)
    try:
        return make_predictor(name)
    except ModelError as exc:
        if explicit:
            raise
        print(f"structrag: warning: fallback predictor {name!r} unavailable ({exc}); using 'rules'",
              file=sys.stderr)
        return make_predictor("rules")


def predictor_from_args(args: argparse.Namespace, opts: dict[str, Any] | None = None) -> dict[str, Any]:
    """``opts`` (the level options) with the chosen backend's predictor and fallback filled in.

    ``--backend offline`` leaves ``opts`` as they are.  Otherwise
    ``opts["predictor"]`` becomes a ready predictor instance (the server is
    not contacted yet) and ``opts["fallback"]`` the offline predictor (None
    with ``--fallback none``: a step the server cannot answer stops the run).
    """
    from ..levels import make_predictor

    opts = dict(opts or {})
    backend = getattr(args, "backend", "offline") or "offline"
    if backend == "offline":
        return opts
    if backend not in BACKENDS:
        raise ConfigError(f"unknown backend {backend!r}", hint="choose one of " + ", ".join(BACKENDS))
    options: dict[str, Any] = {
        "base_url": getattr(args, "base_url", None),
        "model": getattr(args, "backend_model", None),
        "api_key": getattr(args, "api_key", None),
        "timeout": getattr(args, "timeout", 120.0),
        "max_concurrency": getattr(args, "max_concurrency", 4),
    }
    if backend == "vlm":
        options["zoom"] = getattr(args, "zoom", 1.0)
        options["image_format"] = getattr(args, "image_format", "png")
    opts["fallback"] = _fallback(args, opts.pop("model_path", None))
    opts["predictor"] = make_predictor(backend, **options)
    for key in ("granularity", "checkpoint"):
        if key not in opts and getattr(args, key, None) is not None:
            opts[key] = getattr(args, key)
    return opts

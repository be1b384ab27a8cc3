"""Command-line options of the levels stage, shared by ``structrag toc`` and ``structrag levels``.

:func:`add_level_arguments` adds the offline options (``--predictor``, ``--level-model``,
``--memory``, ``--granularity``, ``--seed``, ``--checkpoint``, ``--stats``) and the model-server
backend's (``--backend offline|vlm|llm|whole-document``, ``--base-url``, ``--backend-model``,
``--api-key``, ``--timeout``, ``--max-concurrency``, ``--zoom``, ``--image-format``,
``--fallback``); :func:`level_options_from_args` turns them into the keyword arguments of
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
from typing import Any, Callable

from .errors import ConfigError, ModelError

__all__ = ["add_level_arguments", "level_options_from_args", "BACKENDS"]

BACKENDS = ("offline", "vlm", "llm", "whole-document")


def _granularity(value: str) -> str | int:
    if value in ("heading", "page"):
        return value
    try:
        k = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError("granularity is 'heading', 'page' or a number of pages") from None
    if k < 1:
        raise argparse.ArgumentTypeError("granularity in pages must be at least 1")
    return k


def _positive(convert: Callable[[str], Any], noun: str, bound: str) -> Callable[[str], Any]:
    """An argparse type: ``convert(value)`` when it is above 0 (``bound`` says so in the message)."""

    def check(value: str) -> Any:
        try:
            v = convert(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {noun}: {value!r}") from None
        if v <= 0:
            raise argparse.ArgumentTypeError(f"must be {bound}, got {value}")
        return v

    return check


_positive_float = _positive(float, "a number", "> 0")
_positive_int = _positive(int, "an integer", ">= 1")


def add_level_arguments(p: argparse.ArgumentParser, *, stats_help: str | None = None) -> None:
    """Options choosing how levels are predicted, offline or by a model server.

    ``stats_help``: the help of ``--stats`` on a command that prints statistics;
    None (``view``) adds no ``--stats``.
    """
    g = p.add_argument_group("level prediction")
    g.add_argument("--predictor", default="learned",
                   help="offline predictor: learned (default), rules, font-size, size-rank, numbering")
    g.add_argument("--level-model", dest="level_model", default=None, metavar="FILE",
                   help="LightGBM text model for --predictor learned (default: the model shipped with structrag)")
    g.add_argument("--memory", default="recent", choices=["recent", "previous-n", "random", "branches"],
                   help="which processed headings the predictor sees (default: recent)")
    g.add_argument("--granularity", type=_granularity, default="heading",
                   help="targets per step: heading (default), page, or N pages")
    g.add_argument("--seed", type=int, default=0, help="seed for the random memory strategy")
    g.add_argument("--checkpoint", default=None,
                   help="file recording predicted levels as they come; a rerun continues from it")
    if stats_help is not None:
        g.add_argument("--stats", action="store_true", help=stats_help)
    g = p.add_argument_group(
        "model-server backend",
        "Predict levels with a vision-language model (vlm: page images with the heading boxes drawn) or a "
        "text LLM (llm) on any OpenAI-compatible server (vLLM, Ollama, hosted APIs), with the level-wise "
        "memory; whole-document sends every heading in one prompt (the baseline).",
    )
    env_backend = os.environ.get("STRUCTRAG_BACKEND", "offline")
    # the environment's value is checked where it is used (level_options_from_args), so that a typo
    # there stops a run that predicts levels with a clear error instead of silently running offline
    g.add_argument("--backend", choices=BACKENDS, default=env_backend,
                   help="offline (default; the --predictor), vlm, llm or whole-document "
                        "[env STRUCTRAG_BACKEND]")
    g.add_argument("--base-url", default=None, metavar="URL",
                   help="server's OpenAI-compatible API root, e.g. http://localhost:8000/v1 (vLLM) or "
                        "http://localhost:11434/v1 (Ollama) [env STRUCTRAG_BASE_URL, OPENAI_BASE_URL]")
    g.add_argument("--backend-model", dest="backend_model", default=None, metavar="NAME",
                   help="model name as the server knows it, e.g. Qwen/Qwen2.5-VL-7B-Instruct "
                        "[env STRUCTRAG_MODEL]")
    g.add_argument("--api-key", default=None,
                   help="API key (local servers need none) [env STRUCTRAG_API_KEY, OPENAI_API_KEY]")
    g.add_argument("--timeout", type=_positive_float, default=120.0, metavar="S",
                   help="seconds to wait for one answer (default 120)")
    g.add_argument("--max-concurrency", type=_positive_int, default=4, metavar="N",
                   help="requests in flight at most (default 4)")
    g.add_argument("--zoom", type=_positive_float, default=1.0,
                   help="vlm: page images at ZOOM x the page size in points (1 = 72 dpi, the paper's setting)")
    g.add_argument("--image-format", choices=("png", "jpeg"), default="png",
                   help="vlm: image encoding (png: lossless, default; jpeg: smaller requests)")
    g.add_argument("--fallback", default=None, metavar="PREDICTOR",
                   help="offline predictor for a step the server cannot answer (default: the --predictor, "
                        "or rules if it is unavailable); 'none' to stop with an error instead (the "
                        "--checkpoint keeps the work)")


def level_options_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments for :func:`structrag.pipeline.parse_pdf` / ``assign_levels``.

    ``--backend offline`` leaves the predictor a name.  Otherwise ``predictor``
    becomes a ready predictor instance (the server is not contacted yet) and
    ``fallback`` the offline predictor (None with ``--fallback none``: a step the
    server cannot answer stops the run).
    """
    if args.backend not in BACKENDS:
        raise ConfigError(f"STRUCTRAG_BACKEND={args.backend!r} is not a backend; use one of {', '.join(BACKENDS)}",
                          hint="fix or unset the STRUCTRAG_BACKEND environment variable")
    opts: dict[str, Any] = {
        "predictor": args.predictor,
        "memory": args.memory,
        "granularity": args.granularity,
        "checkpoint": args.checkpoint,
        "seed": args.seed,
    }
    if args.level_model is not None:
        if str(args.predictor).strip().lower() != "learned":
            raise ConfigError("--level-model is only used with --predictor learned",
                              hint=f"drop --level-model, or use --predictor learned instead of {args.predictor!r}")
        opts["model_path"] = args.level_model  # with a model-server backend: the learned fallback's model
    backend = args.backend or "offline"
    if backend == "offline":
        return opts
    if backend not in BACKENDS:
        raise ConfigError(f"unknown backend {backend!r}", hint="choose one of " + ", ".join(BACKENDS))
    options: dict[str, Any] = {
        "base_url": args.base_url,
        "model": args.backend_model,
        "api_key": args.api_key,
        "timeout": args.timeout,
        "max_concurrency": args.max_concurrency,
    }
    if backend == "vlm":
        options["zoom"] = args.zoom
        options["image_format"] = args.image_format
    from .levels.predictors import make_predictor  # `structrag --help` and offline runs never need it

    opts["fallback"] = _fallback(args, opts.pop("model_path", None))
    opts["predictor"] = make_predictor(backend, **options)
    return opts


def _fallback(args: argparse.Namespace, model_path: Any = None):
    """The offline predictor (an instance, built once) answering the steps the server cannot."""
    from .levels.predictors import make_predictor
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

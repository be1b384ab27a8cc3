"""Command-line options, generated from their one declaration (:mod:`structrag.options`).

:func:`add_option_arguments` adds the flags of :class:`~structrag.options.ParseOptions` or
:class:`~structrag.options.ChunkOptions` (each field's flag and help as declared there), and
:func:`options_from_args` reads them back: every command that parses PDFs (``toc``, ``view``,
``index``, ``eval``) takes the same options with the same help.  A flag left out leaves its field
None, so an index stores only what its user chose.

:func:`add_level_arguments` adds what belongs to one run of the level predictor rather than to the
options: ``--level-model``, ``--seed``, ``--checkpoint``, ``--stats``, and the model-server backend
(``--backend offline|vlm|llm|whole-document``, ``--base-url``, ``--backend-model``, ``--api-key``,
``--timeout``, ``--max-concurrency``, ``--zoom``, ``--image-format``);
:func:`level_options_from_args` turns them and the parse options into the arguments of
:func:`structrag.pipeline.parse_pdf` / :func:`structrag.levels.assign_levels`.  Defaults come from the
environment: ``STRUCTRAG_BACKEND``, ``STRUCTRAG_BASE_URL`` (or ``OPENAI_BASE_URL``), ``STRUCTRAG_MODEL``,
``STRUCTRAG_API_KEY`` (or ``OPENAI_API_KEY``).  Nothing here imports ``openai`` until a model backend is
chosen.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable, Iterable, TypeVar

from ..errors import ConfigError, ModelError
from ..options import ParseOptions, option_fields
from ..text import printable

__all__ = ["add_option_arguments", "options_from_args", "add_progress_arguments", "add_level_arguments",
           "level_options_from_args", "parse_options_from_args", "report_fallback", "BACKENDS", "LEVEL_OPTIONS"]

BACKENDS = ("offline", "vlm", "llm", "whole-document")
#: the parse options that concern levels only (``structrag levels``: the headings are given)
LEVEL_OPTIONS = ("predictor", "memory", "granularity", "fallback")

_O = TypeVar("_O")


def add_option_arguments(p: argparse.ArgumentParser, cls: type, *, title: str | None = None,
                         only: Iterable[str] | None = None, exclude: Iterable[str] = ()) -> None:
    """Add the flags of the options class ``cls`` (``only`` these fields, or all but ``exclude``) to ``p``,
    in a group named ``title``; each flag's value lands in ``args.<field name>`` (None when not given)."""
    g = p.add_argument_group(title) if title else p
    names = set(only) if only is not None else None
    added = tuple(f.name for f in option_fields(cls)
                  if (names is None or f.name in names) and f.name not in exclude)
    # what options_from_args reads back: a left-out field may hold another flag's value (eval's --predictor list)
    p.set_defaults(**{_added(cls): added})
    for f in option_fields(cls):
        if f.name not in added:
            continue
        flag = f.metadata["flag"]
        if flag.switch:
            g.add_argument(flag.flag, dest=f.name, action="store_const", const=flag.const, default=None,
                           help=flag.help)
            continue
        extra: dict[str, Any] = {"metavar": flag.metavar} if flag.metavar else {}
        if flag.choices:
            extra["choices"] = flag.choices
        if flag.parse is not None:
            extra["type"] = flag.parse
        g.add_argument(flag.flag, dest=f.name, default=None, help=flag.help, **extra)


def _added(cls: type) -> str:
    return f"_{cls.__name__}_flags"


def options_from_args(cls: Callable[..., _O], args: argparse.Namespace) -> _O:
    """The options of class ``cls`` that ``args`` gives: the fields whose flags :func:`add_option_arguments`
    added and the user gave (the others: None)."""
    names = getattr(args, _added(cls), None)  # type: ignore[arg-type]
    if names is None:
        names = [f.name for f in option_fields(cls)]  # type: ignore[arg-type]
    given = {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}
    return cls.of(given)  # type: ignore[attr-defined]


def add_progress_arguments(p: argparse.ArgumentParser, *, noun: str = "a progress bar") -> None:
    """``--progress`` / ``--no-progress`` (neither: progress on a terminal only) into ``args.progress``."""
    p.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help=f"show {noun}, even when stderr is not a terminal")
    p.add_argument("--no-progress", dest="progress", action="store_false", help=f"never show {noun}")


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
    """The level predictor's options for one run, offline or by a model server (the parse options'
    ``--predictor``, ``--memory``, ``--granularity`` and ``--fallback`` come from :func:`add_option_arguments`).

    ``stats_help``: the help of ``--stats`` on a command that prints statistics;
    None adds no ``--stats``.
    """
    g = p.add_argument_group("level prediction (this run)")
    g.add_argument("--level-model", dest="level_model", default=None, metavar="FILE",
                   help="LightGBM text model for --predictor learned (default: the model shipped with structrag)")
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


def parse_options_from_args(args: argparse.Namespace) -> tuple[ParseOptions, dict[str, Any]]:
    """The parse options ``args`` gives, with the level run's predictor objects in place of names when a
    model-server backend is chosen, and the run's other keyword arguments (``checkpoint``, ``seed``,
    ``model_path``) for :func:`structrag.pipeline.parse_pdf`."""
    opts = options_from_args(ParseOptions, args)
    run = level_options_from_args(args)
    fields = {k: run.pop(k) for k in ("predictor", "fallback") if k in run}
    return (ParseOptions.of({**opts.to_dict(), **fields}) if fields else opts), run


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
    predictor = getattr(args, "predictor", None) or "learned"
    opts: dict[str, Any] = {"checkpoint": args.checkpoint, "seed": args.seed}
    for name in ("predictor", "memory", "granularity"):
        if getattr(args, name, None) is not None:
            opts[name] = getattr(args, name)
    fallback = getattr(args, "fallback", None)
    if fallback is not None:
        opts["fallback"] = None if fallback.strip().lower() == "none" else fallback
    if args.level_model is not None:
        if str(predictor).strip().lower() != "learned":
            raise ConfigError("--level-model is only used with --predictor learned",
                              hint=f"drop --level-model, or use --predictor learned instead of {predictor!r}")
        opts["model_path"] = args.level_model  # with a model-server backend: the learned fallback's model
    backend = args.backend or "offline"
    if backend == "offline":
        if opts.get("fallback", "") is None:
            del opts["fallback"]  # offline, 'none' is what no fallback means already
        return opts
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
    from ..levels.predictors import make_predictor  # `structrag --help` and offline runs never need it

    opts["fallback"] = _fallback(args, opts.pop("model_path", None))
    opts["predictor"] = make_predictor(backend, **options)
    # a server that is not there stops the run with its URL and the fix, unless --fallback said what to do
    opts["unreachable"] = "fallback" if getattr(args, "fallback", None) is not None else "stop"
    return opts


def report_fallback(stats: dict[str, Any] | None, what: str) -> None:
    """One stderr line when level steps fell back to the offline predictor (``stats``: the levels stage's)."""
    if stats and stats.get("fallback_steps"):
        from ..levels.walk.driver import fallback_summary

        print(printable(f"structrag: warning: {what}: {fallback_summary(stats)}"), file=sys.stderr)


def _fallback(args: argparse.Namespace, model_path: Any = None):
    """The offline predictor (an instance, built once) answering the steps the server cannot."""
    from ..levels.predictors import make_predictor
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

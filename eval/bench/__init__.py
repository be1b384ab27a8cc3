"""Benchmarks behind the figures of docs/benchmarks.md, run from a checkout's root: ``python -m eval.bench.<name> --help``.

Each module is one benchmark (``levels``, ``families``, ``detection``, ``contents``, ``chunking``,
``retrieval``, ``generalise``, ``nested``, ``scale``, ``startup``, ``vlm_context``, ...); what they share
is in :mod:`eval.bench.common`.  They build on the evaluation library (:mod:`eval`) and are not
installed with the package.  Without ``--out`` they write under ``structrag-out/<name>/`` in the
working directory (:data:`eval.bench.common.OUT`).
"""

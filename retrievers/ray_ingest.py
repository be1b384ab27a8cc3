"""Index PDFs on Ray Data: many workers parse, chunk and embed; the index merges their shards.

>>> from retrievers.ray_ingest import ray_build                       # doctest: +SKIP
>>> index = ray_build(["reports/"], "my-index", workers=2)            # a local Ray, 2 CPUs
>>> index = ray_build(["/mnt/reports"], "/mnt/my-index", ray_address="auto")   # a running cluster
>>> index.last_report.failed

``pip install "structrag[ray]"``.  The job is a Ray Dataset of the PDFs' paths:

1. ``map_batches`` over an actor pool of :class:`IndexWorker` (a callable
   class, so each worker loads the embedding model once): for each document
   of its batch it hashes the file (a document already indexed with the same
   content and options is skipped), runs the index's own per-document step
   (:func:`retrievers.ingest.documents.process_pdf`: parse, chunk, tokenise), then embeds
   the chunks and section paths of the whole batch in one encoder call
   (:func:`retrievers.ingest.documents.embed_documents`), writes what it made to a shard
   (:mod:`retrievers.store.shards`) and returns one small status row per document.
   Parsing and embedding share the actor: the documents are the heavy data, and
   moving them between two stages through the object store would cost more than
   it buys on CPU workers.  The largest files are handed out first, so no worker
   is left alone with a big one at the end.
2. The driver streams the status rows and commits each document from its shard
   into the index (:func:`retrievers.store.commit.merge_shard`), in input order, so the index is
   the same whatever the number of workers and however they finish.

A document that fails (not a PDF, encrypted, damaged, a worker that crashed on
it) is reported in ``failed`` with its message and the job goes on.  Shards
left by a run that was killed are merged by the next run before it parses
anything.  On a cluster, ``out`` must be on storage every node sees (the
workers write their shards under ``out/shards``) and the nodes need structrag
with the same extras installed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import resource
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from structrag._progress import progress_bar
from structrag.errors import ConfigError, StructragError
from structrag.files import file_sha1
from structrag.options import ChunkOptions, ParseOptions

from .embed.encoder import AUTO_MODEL, is_default_model
from .embed.spaces import Space, space_for_texts
from .index import Index
from .ingest.documents import embed_documents, expand_paths, failure_message, process_pdf
from .store.commit import AddReport, Event, ignore_event, merge_shard
from .store.shards import ShardDocument, require_pyarrow, shard_settings, write_shard

__all__ = ["ray_build", "ray_add", "ray_session", "IndexWorker", "ray_available", "SHARD_DIR", "RUN_REPORT"]

log = logging.getLogger("structrag.ray")

#: Where workers write their shards, inside the index directory.
SHARD_DIR = "shards"
#: The last run's report (failures with their messages), inside the index directory.
RUN_REPORT = "ray-ingest.json"


def ray_available() -> bool:
    try:
        import ray  # noqa: F401
        import ray.data  # noqa: F401
    except ImportError:
        return False
    return True


def _require_ray():
    if not ray_available():
        raise ConfigError("indexing with --engine ray needs Ray Data, which is not installed",
                          hint='pip install "structrag[ray]"')
    require_pyarrow()
    import ray

    return ray


@contextmanager
def ray_session(address: str | None = None, *, num_cpus: int | None = None,
                object_store_mb: int = 128) -> Iterator[None]:
    """Connect to Ray for the duration of the block.

    An already initialised Ray is used as it is (and left running).  With an
    ``address`` (``auto``, ``ray://host:10001``) this joins that cluster;
    otherwise it starts a local Ray sized for a shared machine: ``num_cpus``
    CPUs, a small object store (only status rows travel through it), no
    dashboard.  What this started, it shuts down.
    """
    ray = _require_ray()
    if ray.is_initialized():
        yield
        return
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    common = {"log_to_driver": False, "logging_level": logging.WARNING}
    if address:
        ray.init(address=address, **common)  # the cluster has its own resources and dashboard
    else:
        ray.init(num_cpus=num_cpus, object_store_memory=int(object_store_mb) * 2**20, include_dashboard=False,
                 **common)
    try:
        yield
    finally:
        ray.shutdown()


class IndexWorker:
    """One Ray actor: hash, parse, chunk, tokenise and embed batches of PDFs into shards.

    Constructed by Ray Data once per actor (so the embedding model is loaded
    once per worker); called with a batch ``{"path": [...], "name": [...]}``,
    returns one status row per document: ``status`` is ``done`` (in ``shard``),
    ``unchanged`` or ``failed`` (``detail`` says why).
    """

    def __init__(self, *, parse_options: ParseOptions | Mapping[str, Any],
                 chunk_options: ChunkOptions | Mapping[str, Any], tokenizer: Mapping[str, Any], options_key: str,
                 settings: Mapping[str, Any], existing: Mapping[str, tuple[str, str]], shard_dir: str, threads: int = 1,
                 device: str = "cpu", auto_spaces: bool = False) -> None:
        self.parse_options = ParseOptions.of(parse_options)
        self.chunk_options = ChunkOptions.of(chunk_options)
        self.tokenizer = dict(tokenizer)
        self.options_key = options_key
        self.settings = dict(settings)
        self.existing = {k: tuple(v) for k, v in existing.items()}
        self.shard_dir = Path(shard_dir)
        self.encoder = None
        self.auto_spaces = auto_spaces  # an "auto" index: each document in its script's space
        self._encoders: dict[Space, Any] = {}
        self._device, self._threads = device, max(int(threads), 1)
        if self.settings.get("dense_model"):
            self.first = Space(self.settings["dense_model"], self.settings.get("dense_max_seq_length"))
            self.encoder = self._encoder(self.first)
            self.encoder.dim  # load the model now, once per worker

    def _encoder(self, space: Space):
        if space not in self._encoders:
            from .embed.encoder import DenseEncoder

            # the actor holds `threads` CPUs of Ray's accounting; more embedding threads would oversubscribe
            self._encoders[space] = DenseEncoder(space.model, device=self._device, threads=self._threads,
                                                 max_seq_length=space.max_seq_length)
        return self._encoders[space]

    def _space(self, texts: Sequence[str]) -> Space:
        """The document's space, as :meth:`retrievers.index.Index.space_for` chooses it."""
        if not self.auto_spaces:
            return self.first
        space = space_for_texts(texts, self.first.max_seq_length if is_default_model(self.first.model) else None)
        return self.first if space.model == self.first.model else space

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, list]:
        out: dict[str, list] = {k: [] for k in ("name", "status", "detail", "shard", "pages", "chunks", "cpu_s",
                                                "wall_s", "peak_rss_mb", "worker")}
        made: list[tuple[ShardDocument, float, float]] = []

        def row(name, status, detail="", pages=0, chunks=0, cpu=0.0, wall=0.0):
            out["name"].append(name)
            out["status"].append(status)
            out["detail"].append(detail)
            out["pages"].append(int(pages))
            out["chunks"].append(int(chunks))
            out["cpu_s"].append(float(cpu))
            out["wall_s"].append(float(wall))
            # ru_maxrss only grows: the peak of this worker up to and including this document
            out["peak_rss_mb"].append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
            out["worker"].append(os.getpid())

        for path, name in zip(list(batch["path"]), list(batch["name"])):
            path, name = str(path), str(name)
            try:
                sha1 = file_sha1(path)
            except (StructragError, OSError) as e:
                row(name, "failed", failure_message(e))
                continue
            if self.existing.get(path) == (sha1, self.options_key):  # keyed by path: a document is a file
                row(name, "unchanged")
                continue
            c0, w0 = time.process_time(), time.perf_counter()
            try:
                r = process_pdf(path, self.parse_options, self.chunk_options, self.tokenizer)
            except Exception as e:  # any per-document failure is reported, never fatal to the job
                row(name, "failed", failure_message(e), cpu=time.process_time() - c0, wall=time.perf_counter() - w0)
                continue
            fields = {k: v for k, v in r._asdict().items() if k != "warnings"}  # shown by the driver, not stored
            doc = ShardDocument(name=name, path=path, sha1=sha1, options_key=self.options_key, **fields)
            made.append((doc, time.process_time() - c0, time.perf_counter() - w0))
        if not made:
            out["shard"] = [""] * len(out["name"])
            return out
        c0, w0 = time.process_time(), time.perf_counter()
        try:
            if self.encoder is not None:
                spaces = [self._space([c["text"] for c in d.chunks]) for d, _, _ in made]
                vecs: list[Any] = [None] * len(made)
                for space in dict.fromkeys(spaces):  # one encoder call per space, its documents together
                    at = [i for i, sp in enumerate(spaces) if sp == space]
                    got = embed_documents(self._encoder(space), [([c["text"] for c in made[i][0].chunks],
                                                                  [c["section_path"] for c in made[i][0].chunks])
                                                                 for i in at])
                    for i, v in zip(at, got):
                        vecs[i] = v
                made = [(d._replace(vectors=v, space=None if sp == self.first else sp), c, w)
                        for (d, c, w), v, sp in zip(made, vecs, spaces)]
            ident = hashlib.sha1(json.dumps([(d.name, d.sha1) for d, _, _ in made]).encode("utf-8")).hexdigest()[:20]
            shard = write_shard(self.shard_dir / f"{self.options_key[:8]}-{ident}.parquet", [d for d, _, _ in made],
                                self.settings)
        except Exception as e:  # embedding or the shard write failed: the batch's documents fail, the job goes on
            for d, c, w in made:
                row(d.name, "failed", f"{d.path}: {failure_message(e)}", d.page_count, len(d.chunks), c, w)
            out["shard"] = [""] * len(out["name"])
            return out
        # the batch's embedding and writing time, shared by its documents in proportion to their chunks
        ec, ew = time.process_time() - c0, time.perf_counter() - w0
        total = max(sum(len(d.chunks) for d, _, _ in made), 1)
        n_status = len(out["name"])
        for d, c, w in made:
            share = len(d.chunks) / total
            row(d.name, "done", "", d.page_count, len(d.chunks), c + ec * share, w + ew * share)
        out["shard"] = [""] * n_status + [str(shard)] * len(made)
        return out


def ray_add(
    index: Index,
    paths: Iterable[str | os.PathLike],
    *,
    workers: int | None = None,
    ray_address: str | None = None,
    docs_per_batch: int = 1,
    parse_options: ParseOptions | Mapping[str, Any] | None = None,
    chunk_options: ChunkOptions | Mapping[str, Any] | None = None,
    progress: bool | None = None,
    on_event: Event | None = None,
    object_store_mb: int = 128,
    device: str = "cpu",
    keep_shards: bool = False,
    stats: list[dict[str, Any]] | None = None,
) -> AddReport:
    """:meth:`Index.add` on Ray Data: the same report, the same stored documents.

    ``workers``: actors (one CPU each); default: the CPUs of a local Ray (2 on a
    laptop), or every CPU the cluster has.  ``docs_per_batch``: documents per
    actor call (more fills embedding batches when documents are small).
    ``device``: where workers embed (``cuda`` gives each actor a GPU).
    ``stats``: a list that receives each document's status row (pages, chunks,
    CPU and wall seconds, worker peak RSS) for benchmarks.  ``keep_shards``:
    leave the merged shards on disk.
    """
    if workers is not None and workers < 1:
        raise ConfigError(f"workers must be at least 1, got {workers}")
    if docs_per_batch < 1:
        raise ConfigError(f"docs_per_batch must be at least 1, got {docs_per_batch}")
    ray = _require_ray()
    popts = ParseOptions.of(index.parse_options if parse_options is None else parse_options)
    copts = ChunkOptions.of(index.chunk_options if chunk_options is None else chunk_options)
    okey = index.options_key(popts, copts)
    report = AddReport([], [], [], [])
    emit = on_event or ignore_event
    shard_dir = Path(index.path) / SHARD_DIR
    files = expand_paths(paths)
    index.store.lock()
    try:
        # shards of a run that was killed hold finished documents: commit them before parsing anything
        leftover = sorted(shard_dir.glob("*.parquet")) if shard_dir.is_dir() else []
        for p in leftover:
            merge_shard(index, p, report, emit, remove=not keep_shards)
        # files of the same base name are different documents; the merge names them (retrievers.store.names)
        todo = [{"path": os.path.abspath(f), "name": f.name} for f in files]
        existing = {d.name: d for d in index.store.documents()}
        if todo and index.has_dense and index.dense_model == AUTO_MODEL:
            # the workers need the index's first space: fixed here from the first readable file, as a
            # local build fixes it from its first document
            _first_space(index, todo)
        if todo:
            with ray_session(ray_address, num_cpus=workers, object_store_mb=object_store_mb):
                _run(ray, index, todo, popts, copts, okey, existing, workers, docs_per_batch, device, shard_dir,
                     progress, report, emit, keep_shards, stats)
        index.publish_if(bool(report.added or report.replaced))
        _write_run_report(index.path, report)
    finally:
        index.store.unlock()
    return report


def _first_space(index: Index, todo: list[dict[str, str]], pages: int = 3) -> None:
    """Fix an ``auto`` index's first dense model from the first file with text (its first ``pages`` pages;
    a file that cannot be read is reported by its worker), or from no text when none has any."""
    import pymupdf

    for item in todo:
        try:
            with pymupdf.open(item["path"]) as doc:
                texts = [doc[i].get_text() for i in range(min(pages, doc.page_count))]
        except Exception:  # noqa: BLE001 - reported by its worker
            continue
        if any(t.strip() for t in texts):
            index.resolve_auto_model(texts)
            return
    index.resolve_auto_model([])


def _run(ray, index, todo, popts, copts, okey, existing, workers, docs_per_batch, device, shard_dir, progress, report,
         emit, keep_shards, stats) -> None:
    import ray.data

    n_actors = workers or max(int(ray.cluster_resources().get("CPU", 1)), 1)
    settings = shard_settings(index.tokenizer.to_dict(), index.dense_model, index.dense_max_seq_length)
    ctx = ray.data.DataContext.get_current()
    saved = (ctx.enable_progress_bars, ctx.max_errored_blocks)
    ctx.enable_progress_bars = False
    # a block whose worker died (a crash in a native library, out of memory) is dropped, not fatal:
    # its documents get no status row and are reported as failed below
    ctx.max_errored_blocks = -1
    ray_data_log = logging.getLogger("ray.data")
    saved_level = ray_data_log.level
    ray_data_log.setLevel(logging.WARNING)
    # largest files first: workers take documents as they free up, so the big ones should not come last
    # and leave one worker running alone (commits still follow the input order, below)
    ds = ray.data.from_items(sorted(todo, key=_size_desc), override_num_blocks=max(1, -(-len(todo) // docs_per_batch)))
    gpus = 1 if device.startswith("cuda") else 0
    with warnings.catch_warnings():
        # max_task_retries goes through Ray's remote-args keywords, the documented way to stop a batch
        # that kills its worker from being retried forever; Ray flags those keywords as deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        ds = ds.map_batches(
            IndexWorker,
            fn_constructor_kwargs={
                "parse_options": popts, "chunk_options": copts, "tokenizer": index.tokenizer.to_dict(),
                "options_key": okey, "settings": settings,
                "existing": {d.path: (d.sha1, d.options_key) for d in existing.values()},
                "shard_dir": str(shard_dir), "threads": 1, "device": device,
                "auto_spaces": index.dense_setting == AUTO_MODEL,
            },
            batch_size=docs_per_batch,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=min(n_actors, len(todo))),
            num_cpus=1,
            num_gpus=gpus,
            # a dead worker is restarted (Ray's default) but its batch is not retried: a document that
            # crashes the parser would otherwise kill workers forever; the batch is reported failed below
            max_task_retries=0,
        )
    order = [t["name"] for t in todo]
    path_of = {t["name"]: t["path"] for t in todo}
    ready: dict[str, dict[str, Any]] = {}
    shard_left: dict[str, int] = {}
    nxt = 0
    bar = progress_bar(len(todo), desc="indexing (ray)", unit="pdf", enabled=progress)

    def commit_ready() -> None:
        nonlocal nxt
        while nxt < len(order) and order[nxt] in ready:
            name = order[nxt]
            r = ready.pop(name)
            nxt += 1
            if r["status"] == "failed":
                report.failed.append((path_of[name], r["detail"]))
                emit("failed", name, r["detail"])
            elif r["status"] == "unchanged":
                report.unchanged.append(name)
                emit("unchanged", name, "")
            else:
                merge_shard(index, r["shard"], report, emit, names={name})
                shard_left[r["shard"]] -= 1
                if not shard_left[r["shard"]] and not keep_shards:
                    Path(r["shard"]).unlink(missing_ok=True)

    try:
        for batch in ds.iter_batches(batch_format="numpy", batch_size=None):
            for i in range(len(batch["name"])):
                r = {k: (v[i].item() if hasattr(v[i], "item") else v[i]) for k, v in batch.items()}
                r["shard"] = str(r["shard"])
                if r["status"] == "done":
                    shard_left[r["shard"]] = shard_left.get(r["shard"], 0) + 1
                ready[r["name"]] = r
                if stats is not None:
                    stats.append({k: r[k] for k in r})
                bar.update(1)
            commit_ready()
        lost = [n for n in order[nxt:] if n not in ready]
        for n in lost:
            ready[n] = {"status": "failed", "detail": f"{path_of[n]}: the worker processing this document died "
                                                      "(a crash or out of memory); the other documents went on"}
        commit_ready()
    finally:
        bar.close()
        ctx.enable_progress_bars, ctx.max_errored_blocks = saved
        ray_data_log.setLevel(saved_level)


def _size_desc(item: Mapping[str, str]) -> tuple[int, str]:
    try:
        return -os.stat(item["path"]).st_size, item["name"]
    except OSError:
        return 0, item["name"]  # reported by its worker


def _write_run_report(root: Path, report: AddReport) -> None:
    from .store.durable import atomic_write_bytes

    body = {"added": report.added, "replaced": report.replaced, "unchanged": report.unchanged,
            "failed": [{"path": p, "error": e} for p, e in report.failed], "finished": time.time()}
    atomic_write_bytes(Path(root) / RUN_REPORT, json.dumps(body, ensure_ascii=False, indent=1).encode("utf-8"))


def ray_build(
    paths: Iterable[str | os.PathLike],
    out: str | os.PathLike,
    *,
    workers: int | None = None,
    ray_address: str | None = None,
    docs_per_batch: int = 1,
    progress: bool | None = None,
    on_event: Event | None = None,
    **create_options: Any,
) -> Index:
    """:meth:`Index.build` on Ray: index ``paths`` into ``out`` (created if needed); see :func:`ray_add`.

    The report is in ``index.last_report`` (and ``out/ray-ingest.json``).
    """
    index = Index.open_or_create(out, **create_options)
    try:
        index.last_report = ray_add(index, paths, workers=workers, ray_address=ray_address,
                                    docs_per_batch=docs_per_batch, progress=progress, on_event=on_event)
    except BaseException:
        index.close()
        raise
    return index

"""The import graph of structrag, retrievers and eval: no circles, and every import goes the allowed way.

Static: every ``import`` / ``from ... import`` statement, at module level and inside functions alike
(a function-level import is still a dependency, only a later one).  Allowed directions:

* ``structrag`` never imports ``retrievers`` or ``eval``; ``retrievers`` never imports ``eval``;
* ``structrag`` imports ``llama_index`` only in its adapter (:mod:`structrag.llama_index`);
* inside ``structrag`` a stage imports only earlier stages: base helpers -> extraction ->
  headings -> levels -> tree -> chunks -> pipeline -> adapters and command line;
* inside ``retrievers`` likewise: base helpers -> lexical -> embed -> ingest -> store -> rank ->
  the index (with Ray and the search engines) -> adapters and command line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("structrag", "retrievers", "eval")


def _modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            mods[name.removesuffix(".__init__")] = path
    return mods


MODULES = _modules()


def _imports(name: str, path: Path) -> list[tuple[str, int]]:
    """(imported name, line) for every import statement; relative imports resolved, ``from m import x``
    also gives ``m.x`` (x may be a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.append((target, node.lineno))
            out.extend((f"{target}.{a.name}", node.lineno) for a in node.names)
    return out


GRAPH = {name: {t for t, _ in _imports(name, path) if t in MODULES and t != name} for name, path in MODULES.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_walk_sees_every_package():
    for pkg in PACKAGES:
        assert pkg in MODULES and sum(1 for m in MODULES if m.startswith(pkg + ".")) >= 5


def test_circle_finder_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles():
    assert _circles(GRAPH) == []


def _violations(rule) -> list[str]:
    out = []
    for name, path in MODULES.items():
        for target, line in _imports(name, path):
            why = rule(name, target)
            if why:
                out.append(f"{path.relative_to(ROOT)}:{line}: {name} imports {target} ({why})")
    return out


def _top(name: str) -> str:
    return name.split(".", 1)[0]


def test_packages_import_downwards_only():
    def rule(name: str, target: str) -> str | None:
        src, dst = _top(name), _top(target)
        if src == "structrag" and dst in ("retrievers", "eval"):
            return "the core never imports the packages built on it"
        if src == "retrievers" and dst == "eval":
            return "retrieval never imports the evaluation"
        if src in PACKAGES and dst == "tests":
            return "the library never imports the tests"
        return None

    assert _violations(rule) == []


LLAMA_INDEX_ADAPTERS = ("structrag.llama_index",)


def test_llama_index_only_in_the_adapter():
    def rule(name: str, target: str) -> str | None:
        if _top(name) != "structrag" or _top(target) != "llama_index":
            return None
        if any(name == a or name.startswith(a + ".") for a in LLAMA_INDEX_ADAPTERS):
            return None
        return "only the LlamaIndex adapter imports llama_index"

    assert _violations(rule) == []


#: structrag's stages in pipeline order; a module may import its own stage and earlier ones
STAGES = (
    # the options are declared in the base: each stage they configure reads its defaults from them
    ("base", ("structrag.errors", "structrag.files", "structrag.numbering", "structrag.text", "structrag.model",
              "structrag.options", "structrag._lazy", "structrag._progress", "structrag._pymupdf")),
    ("extraction", ("structrag.extraction",)),
    ("headings", ("structrag.headings",)),
    ("levels", ("structrag.levels",)),
    # the identity reads the extracted document (and heading texts): the root of the tree
    ("tree", ("structrag.tree", "structrag.identity")),
    ("chunks", ("structrag.tokenizers", "structrag.chunking", "structrag.chunks")),
    # a user's corrections are applied to a parsed document, after levels and before the tree is used
    ("pipeline", ("structrag.pipeline", "structrag.corrections")),
    ("adapters", ("structrag.llama_index", "structrag.view", "structrag.cli")),
)


def _stage(name: str) -> int | None:
    for k, (_, prefixes) in enumerate(STAGES):
        if any(name == p or name.startswith(p + ".") for p in prefixes):
            return k
    return None


def test_every_structrag_module_has_a_stage():
    # the package's own __init__ is the public surface over all stages (its heavy names load lazily)
    assert [m for m in MODULES if _top(m) == "structrag" and m != "structrag" and _stage(m) is None] == []


def test_stages_import_earlier_stages_only():
    def rule(name: str, target: str) -> str | None:
        if _top(name) != "structrag" or _top(target) != "structrag" or name == "structrag":
            return None
        a, b = _stage(name), _stage(target)
        if target == "structrag" or a is None or b is None or b <= a:
            return None
        return f"stage {STAGES[a][0]} imports the later stage {STAGES[b][0]}"

    assert _violations(rule) == []


@pytest.mark.parametrize("stage,forbidden", [("structrag.extraction", "structrag.headings"),
                                             ("structrag.headings", "structrag.levels")])
def test_the_rule_catches_a_backward_import(stage, forbidden):
    a, b = _stage(stage), _stage(forbidden)
    assert a is not None and b is not None and b > a


#: retrievers' stages in pipeline order, as in STAGES: the lexical and dense representations, documents in,
#: the index directory and its arrays, ranking, then the front doors built on them
RETRIEVERS_STAGES = (
    ("base", ("retrievers.extras", "retrievers.synthetic")),
    ("lexical", ("retrievers.lexical",)),
    ("embed", ("retrievers.embed",)),
    ("ingest", ("retrievers.ingest",)),
    ("store", ("retrievers.store",)),
    ("rank", ("retrievers.rank",)),
    # the front door (Index) and what builds on it: Index.build on Ray, serving from a search engine
    ("index", ("retrievers.index", "retrievers.ray_ingest", "retrievers.engines")),
    ("adapters", ("retrievers.cli", "retrievers.demo", "retrievers.view_hits", "retrievers.llama_index")),
)


def _retrievers_stage(name: str) -> int | None:
    for k, (_, prefixes) in enumerate(RETRIEVERS_STAGES):
        if any(name == p or name.startswith(p + ".") for p in prefixes):
            return k
    return None


def _retrievers_backward(name: str, target: str) -> str | None:
    """Why ``name`` may not import ``target`` (None: it may)."""
    if _top(name) != "retrievers" or _top(target) != "retrievers" or name == "retrievers" or target == "retrievers":
        return None
    a, b = _retrievers_stage(name), _retrievers_stage(target)
    if a is None or b is None or b <= a:
        return None
    return f"stage {RETRIEVERS_STAGES[a][0]} imports the later stage {RETRIEVERS_STAGES[b][0]}"


def test_every_retrievers_module_has_a_stage():
    # the package's own __init__ is the public surface over all stages (its names load lazily)
    assert [m for m in MODULES if _top(m) == "retrievers" and m != "retrievers" and _retrievers_stage(m) is None] == []


def test_retrievers_stages_import_earlier_stages_only():
    assert _violations(_retrievers_backward) == []


@pytest.mark.parametrize("module,forbidden", [("retrievers.store.commit", "retrievers.rank.features"),
                                              ("retrievers.lexical.bm25", "retrievers.embed.encoder"),
                                              ("retrievers.rank.search", "retrievers.index")])
def test_the_retrievers_rule_catches_a_backward_import(module, forbidden):
    assert module in MODULES and forbidden in MODULES
    assert _retrievers_backward(module, forbidden)
    assert _retrievers_backward(forbidden, module) is None  # the other way is allowed

"""Lazy package exports: names that a package's ``__init__`` lists but imports on first use.

Used by ``structrag``, ``retrievers``, ``retrievers.engines`` and ``eval``, whose public names
pull in heavy modules (the chunker, faiss, LightGBM, the engine clients) that many commands
never need.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, MutableMapping


def lazy_exports(package: str, table: Mapping[str, str], namespace: MutableMapping[str, Any]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Module ``__getattr__`` and ``__dir__`` for ``package``: ``table`` maps a public name to
    the submodule (relative to ``package``) that defines it; a name is imported on first
    access and then kept in ``namespace`` (the package's ``globals()``)."""

    def __getattr__(name: str) -> Any:
        mod = table.get(name)
        if mod is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(f".{mod}", package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__

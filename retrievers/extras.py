"""Optional dependencies (the ``dense``, ``ray`` and ``engines`` extras): imported when used, or an error that
says which extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from structrag.errors import ConfigError

__all__ = ["require"]


def require(module: str, *, what: str, package: str, extra: str) -> ModuleType:
    """``module`` imported; else ConfigError: ``what`` needs ``package``, with the pip command of ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ConfigError(f"{what} needs {package}, which is not installed",
                          hint=f'pip install "structrag[{extra}]"') from e

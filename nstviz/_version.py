"""nstviz's version, in a module that imports nothing (so any layer may read it)."""

__version__ = "0.1.0"
"""The package version (also ``version`` in ``pyproject.toml``)."""

__all__ = ["__version__"]

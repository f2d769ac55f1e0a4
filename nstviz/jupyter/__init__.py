"""Jupyter integration: the ``%nstrace`` / ``%%nstrace`` magics and the ``Viewer`` widget.

``%load_ext nstviz`` (or ``nstviz`` in IPython's ``extensions`` list) calls
:func:`load_ipython_extension`. Importing this package does not import anywidget or torch;
``Viewer`` is loaded on first use.
"""

from __future__ import annotations

from typing import Any

_MAGIC_NAMES = ("nstrace",)


def load_ipython_extension(ipython: Any) -> None:
    """Register the ``%nstrace`` and ``%%nstrace`` magics in ``ipython``."""
    from nstviz.jupyter.magics import NstraceMagics

    ipython.register_magics(NstraceMagics)


def unload_ipython_extension(ipython: Any) -> None:
    """Remove the magics registered by :func:`load_ipython_extension`."""
    manager = ipython.magics_manager
    for kind in ("line", "cell"):
        for name in _MAGIC_NAMES:
            manager.magics[kind].pop(name, None)
    manager.registry.pop("NstraceMagics", None)


def last_viewer() -> Any:
    """The ``Viewer`` the most recent ``%nstrace`` / ``%%nstrace`` displayed, or None.

    Use it to read or drive the view from Python::

        w = nstviz.jupyter.last_viewer()
        w.selected_node          # what was clicked
        w.select(node="sin")     # select from Python
    """
    from nstviz.jupyter import magics

    return magics.last_viewer()


def __getattr__(name: str) -> Any:
    if name == "Viewer":
        from nstviz.jupyter.widget import Viewer

        return Viewer
    raise AttributeError(f"module 'nstviz.jupyter' has no attribute {name!r}")


__all__ = ["Viewer", "last_viewer", "load_ipython_extension", "unload_ipython_extension"]

"""The ``nstviz`` command (private: use the commands, not these modules)."""

from nstviz.cli.main import main

__all__ = ["main"]

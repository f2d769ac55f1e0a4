"""``python -m nstviz``: the ``nstviz`` command (see :mod:`nstviz.cli.main`)."""

from __future__ import annotations

import sys

from nstviz.cli.main import main

if __name__ == "__main__":
    sys.exit(main())

"""Record the Reports the browser tests of ``tests/users`` read: ``python -m tests.users.make_fixtures``."""

from __future__ import annotations

from pathlib import Path

import nstviz
from tests.users.test_mechanisms import LOOP_SKIP_CELL

HERE = Path(__file__).with_name("fixtures")


def main() -> None:
    HERE.mkdir(exist_ok=True)
    report = nstviz.trace_code(LOOP_SKIP_CELL, {}, auto=True, backend="eager", title="skipped frame")
    report.save_json(HERE / "skipped_frame.report.json")
    print(report.headline.text)


if __name__ == "__main__":
    main()

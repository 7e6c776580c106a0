"""``python -m benchmarks.security [out.json] [--per-case N]``: measure, print, write JSON."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import time
from pathlib import Path

from .classes import class_cases
from .harness import all_cases, configs
from .report import measure, table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", nargs="?", type=Path, default=Path("security-results.json"))
    parser.add_argument("--per-case", type=int, default=4, help="tasks each injection runs on")
    parser.add_argument(
        "--no-classes", action="store_true", help="only the suite's injection styles"
    )
    args = parser.parse_args()
    # ADK logs a line per model call; the table is the output.
    logging.getLogger("google_adk").setLevel(logging.ERROR)
    start = time.perf_counter()
    cases = all_cases()
    result = asyncio.run(
        measure(
            configs(),
            cases,
            args.per_case,
            progress=lambda n: print(f"running {n}..."),
            class_cases=[] if args.no_classes else class_cases(),
        )
    )
    result["measured_on"]["seconds"] = round(time.perf_counter() - start, 1)
    print(table(result))
    print(f"\n{result['measured_on']}")
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run every benchmark in this folder, one after the other, and print what each one measured.

Every `benchmarks/<name>.py` is a script that prints `name: value unit` lines (or one JSON object
with --json). Each runs in its own subprocess, so one's imports, settings and event loop never
touch another's.

Usage: python -m benchmarks [--json] [names ...]   (from the repository root; `make bench`)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


# Modules of this folder that are not benchmarks: the settings the product runs under.
NOT_BENCHMARKS = {"settings"}


def scripts() -> list[Path]:
    return sorted(
        path
        for path in HERE.glob("*.py")
        if not path.name.startswith("_") and path.stem not in NOT_BENCHMARKS
    )


def run(script: Path, as_json: bool) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(script), *(["--json"] if as_json else [])]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one merged JSON object")
    parser.add_argument("names", nargs="*", help="only these benchmarks (file names without .py)")
    options = parser.parse_args()

    available = {path.stem: path for path in scripts()}
    unknown = sorted(set(options.names) - set(available))
    if unknown:
        parser.error(f"no such benchmark: {', '.join(unknown)} (available: {', '.join(available)})")
    chosen = [available[name] for name in options.names] if options.names else list(available.values())

    merged: dict[str, object] = {}
    failed = []
    for script in chosen:
        result = run(script, options.json)
        if result.returncode != 0:
            failed.append(script.stem)
            print(f"benchmark {script.stem} failed (exit {result.returncode}):", file=sys.stderr)
            print(result.stderr.rstrip(), file=sys.stderr)
            continue
        if options.json:
            merged.update(json.loads(result.stdout.strip().splitlines()[-1]))
        else:
            print(result.stdout.rstrip(), flush=True)
    if options.json:
        print(json.dumps(merged))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

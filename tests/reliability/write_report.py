"""Write ``docs/reliability.md`` from the figures a reliability run recorded (JSON lines)."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

HEAD = """# Reliability

turnmark runs on folders other people and programs write. These probes try it the way an
attacker and a faulty machine would; `just reliability` runs them at full scale and writes
this page (`just test` runs the same probes at a smaller scale on every change).

"""


def main(figures: Path, output: Path, passed: bool) -> None:
    rows = [json.loads(line) for line in figures.read_text(encoding="utf-8").splitlines() if line.strip()]
    setups = sum(row.get("setups") or 0 for row in rows)
    lines = [
        HEAD,
        f"Last full run: {datetime.now(UTC).strftime('%Y-%m-%d')}, "
        f"{'every probe passed' if passed else 'SOME PROBES FAILED'}; "
        f"{setups} hostile or faulty setups tried.\n\n",
        "| probe | setups | ran | result | must show | seconds |\n",
        "|---|---|---|---|---|---|\n",
    ]
    for row in rows:
        lines.append(
            f"| {row['probe']} | {row.get('setups') or ''} | {row['count']} | {row['result']} | {row['must_show']} "
            f"| {row['seconds'] or ''} |\n"
        )
    output.write_text("".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "0")

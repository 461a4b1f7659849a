"""Per-column statistics of a CSV file. Input: JSON on stdin {"file": ..., "columns": [...]}; output: JSON on stdout."""
import csv
import json
import os
import sys


def main() -> None:
    args = json.loads(sys.stdin.read() or "{}")
    workspace = os.environ["AGENT_WORKSPACE_PATH"]
    rel = args.get("file")
    if not isinstance(rel, str) or not rel:
        print("args.file (a workspace-relative CSV path) is required", file=sys.stderr)
        sys.exit(2)
    path = os.path.realpath(os.path.join(workspace, rel))
    if not path.startswith(os.path.realpath(workspace) + os.sep):
        print(f"{rel} is outside the workspace", file=sys.stderr)
        sys.exit(2)
    wanted = args.get("columns")
    stats = {}
    rows = 0
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            rows += 1
            for col, raw in row.items():
                if wanted and col not in wanted:
                    continue
                s = stats.setdefault(col, {"count": 0, "skipped": 0, "sum": 0.0, "min": None, "max": None})
                try:
                    v = float(raw)
                except (TypeError, ValueError):
                    s["skipped"] += 1
                    continue
                s["count"] += 1
                s["sum"] += v
                s["min"] = v if s["min"] is None else min(s["min"], v)
                s["max"] = v if s["max"] is None else max(s["max"], v)
    out = {}
    for col, s in stats.items():
        if s["count"] == 0 and not wanted:
            continue
        s["mean"] = s["sum"] / s["count"] if s["count"] else None
        out[col] = s
    print(json.dumps({"rows": rows, "columns": out}, sort_keys=True))


if __name__ == "__main__":
    main()

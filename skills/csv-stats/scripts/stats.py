"""Per-column statistics of a CSV file in the workspace (the csv-stats skill).

Input (JSON on stdin): {"file": "uploads/data.csv", "columns": ["price"], "delimiter": ",",
"output": "outputs/stats.json"}; only "file" is required. Output (stdout): JSON
{"rows": N, "columns": {"<col>": {"count", "skipped", "sum", "min", "max", "mean"}}, ...}.
Standard library only. Same contract as stats.mjs.
"""
import csv
import json
import math
import os
import re
import sys

NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def fail(message: str) -> None:
    print(message, file=sys.stderr)
    sys.exit(2)


def inside(workspace: str, rel: str, what: str) -> str:
    path = os.path.realpath(os.path.join(workspace, rel))
    if not path.startswith(workspace + os.sep):
        fail(f"{what} {rel!r} is outside the workspace")
    return path


def main() -> None:
    args = json.loads(sys.stdin.read() or "{}")
    if not isinstance(args, dict):
        fail("the arguments must be a JSON object")
    workspace = os.path.realpath(os.environ["AGENT_WORKSPACE_PATH"])
    rel = args.get("file")
    if not isinstance(rel, str) or not rel:
        fail('"file" (a workspace-relative CSV path, e.g. uploads/data.csv) is required')
    path = inside(workspace, rel, "file")
    if not os.path.isfile(path):
        fail(f"file {rel!r} not found in the workspace")
    wanted = args.get("columns")
    if wanted is not None and not (isinstance(wanted, list) and all(isinstance(c, str) for c in wanted)):
        fail('"columns" must be a list of column names')
    delimiter = args.get("delimiter") or ","

    stats = {}
    rows = 0
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.reader(f, delimiter=delimiter)
        header = next(reader, None)
        if header is None:
            fail(f"file {rel!r} is empty")
        header = [h.strip() for h in header]
        if wanted:
            missing = [c for c in wanted if c not in header]
            if missing:
                fail(f"no such column(s): {', '.join(missing)}; the columns are: {', '.join(header)}")
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            rows += 1
            for i, col in enumerate(header):
                if wanted and col not in wanted:
                    continue
                raw = row[i].strip() if i < len(row) else ""
                s = stats.setdefault(col, {"count": 0, "skipped": 0, "sum": 0, "min": None, "max": None})
                if not NUMBER.match(raw):
                    s["skipped"] += 1
                    continue
                v = float(raw)
                if v.is_integer() and abs(v) < 2**53:
                    v = int(v)
                s["count"] += 1
                s["sum"] += v
                s["min"] = v if s["min"] is None else min(s["min"], v)
                s["max"] = v if s["max"] is None else max(s["max"], v)

    columns = {}
    for col in header:
        s = stats.get(col)
        if s is None or (s["count"] == 0 and not wanted):
            continue  # not numeric
        s["mean"] = s["sum"] / s["count"] if s["count"] else None
        if isinstance(s["sum"], float) and not math.isfinite(s["sum"]):
            s["sum"] = None
        columns[col] = s
    result = {"file": rel, "rows": rows, "columns": columns}

    out = args.get("output")
    if out:
        if not isinstance(out, str) or not out.startswith("outputs/"):
            fail('"output" must be a path under outputs/, e.g. outputs/stats.json')
        target = inside(workspace, out, "output")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
        result["output"] = out
    print(json.dumps(result))


if __name__ == "__main__":
    main()

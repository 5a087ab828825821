#!/usr/bin/env python3
"""Serving under load: Envelope's simulated TTFT / TPOT / throughput against published runs at a stated load.

    tools/validation_serving_load.py [CLI] [--points FILE] [--keep DIR] [--json]

Run from the repository root; CLI defaults to build/app/envelope-cli. Dev-only, Python 3 standard
library only (issue 27: the calibration set of docs/formulas-serving.md section 7).

The points live in tests/data/validation/serving-load/points.json. Each has
  id, source, conditions (quoted from the source), engine, engine_version, model and gpu (preset ids),
  tp, precision (bf16 / fp8 / int4 ...), input_tokens and output_tokens (Envelope workload forms:
  a count, {"mean", "p90"} or {"histogram"}), request_rate (Poisson, req/s) or concurrency (closed
  loop), measured ({metric: value} in seconds, tokens/s or requests/s), assumptions, and optionally
  context (the engine's max_model_len; default input + output rounded up), serving_extra (further
  `serving` keys: engine, max_num_seqs, gpu_memory_utilization, max_batched_tokens, ...),
  kv_bits (overrides the precision's default) and skip (a reason; such points are listed, not run).

For each point a plan is written to a temporary directory: one engine (cluster.gpus = serving.tp),
the workload, weight/KV bits from the precision, then `envelope-cli estimate PLAN` is run and the
figures read from `serving.load` (and `serving.itl_s`). Signed error = (Envelope - measured) / measured.

Metric map (measured key -> result field):
  ttft_mean_s   -> serving.load.ttft_mean_s     ttft_median_s -> serving.load.ttft_p50_s
  ttft_p90_s    -> serving.load.ttft_p90_s      ttft_p99_s    -> serving.load.ttft_p99_s
  tpot_mean_s   -> serving.load.tpot_mean_s     tpot_median_s -> serving.load.tpot_p50_s
  tpot_p90_s    -> serving.load.tpot_p90_s      tpot_p99_s    -> serving.load.tpot_p99_s
  itl_mean_s    -> serving.itl_s (all decode gaps / all decode tokens)
  itl_median_s  -> serving.itl_s (Envelope has no ITL percentile; the mean stands in)
  e2e_mean_s    -> serving.load.e2e_mean_s      e2e_median_s  -> serving.load.e2e_mean_s (mean stands in)
  output_tokens_per_s -> serving.load.output_tokens_per_s
  requests_per_s      -> serving.load.request_rate_rps
Figures under a point's `reported_not_compared` are kept for reference only (a median E2E against
Envelope's mean, a multi-step engine's per-burst ITL). A saturated run withholds TTFT (null): it is printed as "unbounded" and left out of the medians.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POINTS = os.path.join(ROOT, "tests", "data", "validation", "serving-load", "points.json")
DEFAULT_CLI = os.path.join("build", "app", "envelope-cli")

METRICS: dict[str, tuple[str, str, str]] = {
    # measured key: (where in the result, field, kind)
    "ttft_mean_s": ("load", "ttft_mean_s", "TTFT"),
    "ttft_median_s": ("load", "ttft_p50_s", "TTFT"),
    "ttft_p90_s": ("load", "ttft_p90_s", "TTFT"),
    "ttft_p99_s": ("load", "ttft_p99_s", "TTFT"),
    "tpot_mean_s": ("load", "tpot_mean_s", "TPOT/ITL"),
    "tpot_median_s": ("load", "tpot_p50_s", "TPOT/ITL"),
    "tpot_p90_s": ("load", "tpot_p90_s", "TPOT/ITL"),
    "tpot_p99_s": ("load", "tpot_p99_s", "TPOT/ITL"),
    "itl_mean_s": ("serving", "itl_s", "TPOT/ITL"),
    "itl_median_s": ("serving", "itl_s", "TPOT/ITL"),
    "e2e_mean_s": ("load", "e2e_mean_s", "E2E"),
    "e2e_median_s": ("load", "e2e_mean_s", "E2E"),
    "output_tokens_per_s": ("load", "output_tokens_per_s", "throughput"),
    "requests_per_s": ("load", "request_rate_rps", "throughput"),
}
KINDS = ["TTFT", "TPOT/ITL", "E2E", "throughput"]

WEIGHT_BITS = {"bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "w8a8": 8, "int4": 4, "awq": 4, "gptq": 4, "nvfp4": 4, "fp4": 4}
KV_BITS = {"bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "int4": 16, "awq": 16, "gptq": 16, "nvfp4": 8, "fp4": 8}


def length_max(spec: Any) -> float:
    """The longest length a workload form asks for (the mean for a log-normal, as the plan checks)."""
    if isinstance(spec, (int, float)):
        return float(spec)
    if "histogram" in spec:
        return float(max(b[0] for b in spec["histogram"]))
    return float(spec["mean"])


def plan_for(point: dict[str, Any]) -> dict[str, Any]:
    tp = int(point["tp"])
    precision = str(point.get("precision", "bf16")).lower()
    workload: dict[str, Any] = {"input_tokens": point["input_tokens"], "output_tokens": point["output_tokens"]}
    if "request_rate" in point:
        workload["request_rate"] = point["request_rate"]
    else:
        workload["concurrency"] = point["concurrency"]
    if point.get("prefix_hit_rate"):
        workload["prefix_hit_rate"] = point["prefix_hit_rate"]
    context = point.get("context")
    if not context:
        need = length_max(point["input_tokens"]) + length_max(point["output_tokens"])
        context = 1 << max(10, math.ceil(math.log2(need + 1)))
    serving: dict[str, Any] = {
        "engine": "vllm",
        "tp": tp,
        "context": int(context),
        "weight_bits": WEIGHT_BITS.get(precision, 16),
        "kv_bits": int(point.get("kv_bits", KV_BITS.get(precision, 16))),
        "workload": workload,
    }
    serving.update(point.get("serving_extra", {}))
    # The engine's release, when the point states one Envelope can read ("0.3.0"; not
    # "0.6.x (not stated)"): its accounting row in presets/engines.json.
    version = str(point.get("engine_version", ""))
    if re.fullmatch(r"v?\d+(\.\d+)*", version) and serving.get("engine") in ("vllm", "sglang", "trtllm"):
        serving["engine_version"] = version
    return {
        "format": "envelope.plan",
        "version": 1,
        "name": point["id"],
        "model": point["model"],
        "gpu": point["gpu"],
        "cluster": {"gpus": tp, "gpus_per_node": max(tp, 1)},
        "serving": serving,
    }


def run_point(cli: str, point: dict[str, Any], tmp: str) -> tuple[dict[str, Any] | None, str]:
    path = os.path.join(tmp, point["id"] + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(plan_for(point), f, indent=1)
    proc = subprocess.run([cli, "estimate", path], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return None, (proc.stderr or proc.stdout).strip().splitlines()[-1:][0] if (proc.stderr or proc.stdout).strip() else "rc %d" % proc.returncode
    try:
        return json.loads(proc.stdout), ""
    except json.JSONDecodeError as e:
        return None, "bad JSON: %s" % e


def fmt(value: float, key: str) -> str:
    if key.endswith("_s") and not key.endswith("per_s"):
        return "%.1f ms" % (value * 1000) if value < 10 else "%.2f s" % value
    return "%.1f" % value if value < 1000 else "%.0f" % value


def check(rows: list[dict[str, Any]]) -> int:
    """The guards behind the CTest validation_serving_load; prints each and returns 1 on a miss."""
    failed = False
    for kind in ("TTFT", "TPOT/ITL"):
        these = [r for r in rows if r["kind"] == kind and r["error"] is not None]
        if len(these) < 15:
            print("FAIL %s: %d figures, expected at least 15" % (kind, len(these)))
            failed = True
            continue
        med = statistics.median(abs(r["error"]) for r in these)
        stated = min(r["stated_uncertainty"] for r in these if r["stated_uncertainty"] is not None)
        print("%s: %d figures, median |error| %.1f%%, stated +-%.0f%%" % (kind, len(these), 100 * med, 100 * stated))
        if stated < med:
            print("FAIL %s: the stated uncertainty is below the median error" % kind)
            failed = True
        if kind == "TPOT/ITL" and med > 0.15:
            print("FAIL TPOT/ITL: median |error| above issue 27's 15%")
            failed = True
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cli", nargs="?", default=DEFAULT_CLI, help="envelope-cli path (default %(default)s)")
    ap.add_argument("--points", default=POINTS)
    ap.add_argument("--keep", help="write the plans here instead of a temporary directory")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead of Markdown")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when the TPOT / ITL median |error| exceeds 15%% (issue 27's target) or a "
                         "stated serving uncertainty (serving.uncertainty for TPOT / ITL, "
                         "serving.ttft_uncertainty for TTFT) is below its kind's median |error|")
    args = ap.parse_args()

    cli = args.cli
    if not os.path.isabs(cli) and not os.path.exists(cli):
        cli = os.path.join(ROOT, cli)
    if not os.path.exists(cli):
        print("envelope-cli not found at %s" % args.cli, file=sys.stderr)
        return 2
    with open(args.points, encoding="utf-8") as f:
        points = json.load(f)

    rows: list[dict[str, Any]] = []
    skipped: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="envelope-load-") as tmpdir:
        tmp = args.keep or tmpdir
        os.makedirs(tmp, exist_ok=True)
        for point in points:
            if point.get("skip"):
                skipped.append((point["id"], point["skip"]))
                continue
            result, err = run_point(cli, point, tmp)
            if result is None:
                skipped.append((point["id"], "estimate failed: " + err))
                continue
            serving = result.get("serving") or {}
            load = serving.get("load") or {}
            for key, measured in point["measured"].items():
                if key not in METRICS:
                    continue
                where, field, kind = METRICS[key]
                value = (load if where == "load" else serving).get(field)
                stated = {"TTFT": serving.get("ttft_uncertainty"),
                          "TPOT/ITL": serving.get("uncertainty")}.get(kind)
                row = {"id": point["id"], "metric": key, "kind": kind, "measured": measured,
                       "envelope": value, "saturated": bool(load.get("saturated")),
                       "stated_uncertainty": stated,
                       "error": None if value is None else (value - measured) / measured}
                rows.append(row)

    if args.json:
        print(json.dumps({"rows": rows, "skipped": skipped}, indent=1))
        return 0
    if args.check:
        return check(rows)

    print("| point | metric | measured | Envelope | error |")
    print("| --- | --- | ---: | ---: | ---: |")
    for r in rows:
        env = "unbounded" if r["envelope"] is None else fmt(r["envelope"], r["metric"])
        err = "n/a" if r["error"] is None else "%+.0f%%" % (100 * r["error"])
        print("| %s | %s | %s | %s | %s |" % (r["id"], r["metric"], fmt(r["measured"], r["metric"]), env, err))
    print()
    print("| kind | n | median abs error | median signed error |")
    print("| --- | ---: | ---: | ---: |")
    all_err: list[float] = []
    for kind in KINDS:
        errs = [r["error"] for r in rows if r["kind"] == kind and r["error"] is not None]
        all_err += errs
        if errs:
            print("| %s | %d | %.0f%% | %+.0f%% |" % (kind, len(errs), 100 * statistics.median(abs(e) for e in errs),
                                                   100 * statistics.median(errs)))
    if all_err:
        print("| overall | %d | %.0f%% | %+.0f%% |" % (len(all_err), 100 * statistics.median(abs(e) for e in all_err),
                                                   100 * statistics.median(all_err)))
    withheld = sum(1 for r in rows if r["error"] is None)
    if withheld:
        print("\n%d figure(s) withheld by Envelope (saturated: TTFT unbounded), not in the medians." % withheld)
    for pid, why in skipped:
        print("skipped %s: %s" % (pid, why))
    return 0


if __name__ == "__main__":
    sys.exit(main())

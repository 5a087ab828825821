#!/usr/bin/env python3
"""Published training throughput vs Envelope's op-level step time.

Runs `envelope-cli estimate PLAN --format json` on every point of
tests/data/validation/throughput/points.json (the plans of
tests/data/validation/timing/training-throughput.json) and prints a Markdown table:
measured and estimated tokens/s/GPU, the error, the timing source, and the parts of the
estimated step (GEMM, attention, elementwise, exposed communication, pipeline bubble,
optimizer) as shares of the step; then the median and worst |error| overall, per GPU,
per framework and per source.

A plan that the estimator says does not fit in memory has its rates withheld in the
result (`throughput_valid: false`); its step time and parts are then read from the
explanations (`explain`), which are computed either way, and the row says `no` under
"fits".

Usage: tools/validation_throughput.py [--cli build/app/envelope-cli] [--points FILE]
       [--json OUT]   (also write the rows as JSON)
Python 3 standard library only.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_POINTS = os.path.join(ROOT, "tests", "data", "validation", "throughput", "points.json")

PARTS = [
    ("gemm", "time_breakdown", "gemm_s"),
    ("attn", "time_breakdown", "attention_s"),
    ("elem", "time_breakdown", "elementwise_s"),
    ("comm", "communication", "exposed_s"),
    ("bubble", "communication", "pp_bubble_s"),
    ("optim", "time_breakdown", "optimizer_s"),
]


def gpu_label(plan):
    gpu = plan.get("gpu")
    if isinstance(gpu, str):
        return gpu
    if isinstance(gpu, dict):
        if "preset" in gpu:
            return gpu["preset"]
        # custom GPU objects are labelled by the kernel table they borrow
        return (gpu.get("kernels") or gpu.get("name") or "custom") + "*"
    return "?"


def source_family(point_id):
    return point_id.split("-", 1)[0]


def figure(result, explain, section, key):
    """training.<section>.<key> from the result, else from the explanations."""
    t = result.get("training", {})
    v = t.get(section, {}).get(key) if section else t.get(key)
    if v is None:
        name = "training." + (section + "." if section else "") + key
        v = explain.get(name)
    return v


def run_point(cli, folder, point):
    plan_path = os.path.join(folder, point["plan"])
    with open(plan_path) as f:
        plan = json.load(f)
    row = {
        "id": point["id"],
        "gpu": gpu_label(plan),
        "framework": plan.get("training", {}).get("framework", "generic"),
        "family": source_family(point["id"]),
        "measured": point["measured"],
    }
    try:
        proc = subprocess.run([cli, "estimate", plan_path, "--format", "json"],
                              capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        row["error"] = str(e)
        return row
    if proc.returncode != 0:
        row["error"] = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["rc %d" % proc.returncode]
        row["error"] = row["error"][0]
        return row
    result = json.loads(proc.stdout)
    explain = {e["figure"]: e.get("value") for e in result.get("explain", [])}
    t = result.get("training", {})
    row["fits"] = bool(t.get("fits"))
    row["timing_source"] = t.get("timing_source")
    est = figure(result, explain, None, "tokens_per_s_per_gpu")
    step = figure(result, explain, None, "step_time_s")
    row["estimated"] = est
    row["step_time_s"] = step
    row["mfu"] = figure(result, explain, None, "mfu")
    row["measured_share"] = t.get("time_breakdown", {}).get("measured_share")
    if est:
        row["error_pct"] = 100.0 * (est - point["measured"]) / point["measured"]
    row["parts_s"] = {}
    row["shares"] = {}
    for name, section, key in PARTS:
        v = figure(result, explain, section, key)
        row["parts_s"][name] = v
        row["shares"][name] = (v / step) if (v is not None and step) else None
    # What the estimate would be if every exposed collective hid behind compute (a bound on
    # what the overlaps the publications state but the plan cannot express could recover).
    exposed = row["parts_s"]["comm"]
    if est and step and exposed is not None and step > exposed:
        row["error_comm_hidden_pct"] = 100.0 * (est * step / (step - exposed) - point["measured"]) / point["measured"]
    row["warnings"] = result.get("warnings", [])
    return row


def pct(x, digits=0):
    return "—" if x is None else ("%.*f%%" % (digits, 100.0 * x))


def fmt_num(x):
    if x is None:
        return "—"
    return "{:,.0f}".format(x) if x >= 100 else "{:,.1f}".format(x)


def table(rows):
    head = ["id", "GPU", "framework", "measured", "estimated", "error", "error, comm hidden",
            "fits", "timing",
            "gemm", "attn", "elem", "exp. comm", "bubble", "optim"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        if "error" in r:
            out.append("| %s | %s | %s | %s | failed: %s |%s" % (
                r["id"], r["gpu"], r["framework"], fmt_num(r["measured"]),
                r["error"].replace("|", "/"), " |" * (len(head) - 5)))
            continue
        s = r["shares"]
        err = r.get("error_pct")
        out.append("| " + " | ".join([
            r["id"], r["gpu"], r["framework"], fmt_num(r["measured"]), fmt_num(r["estimated"]),
            "—" if err is None else "%+.0f%%" % err,
            "—" if r.get("error_comm_hidden_pct") is None else "%+.0f%%" % r["error_comm_hidden_pct"],
            "yes" if r["fits"] else "no",
            {"measured kernels": "kernels", "spec estimate": "spec", "mfu override": "mfu"}.get(
                r["timing_source"], str(r["timing_source"])),
            pct(s["gemm"]), pct(s["attn"]), pct(s["elem"]), pct(s["comm"]), pct(s["bubble"]),
            pct(s["optim"], 1),
        ]) + " |")
    return "\n".join(out)


def summary(rows, key, title):
    groups = {}
    for r in rows:
        if r.get("error_pct") is None:
            continue
        groups.setdefault(r[key] if key else "all", []).append(r)
    out = ["| %s | n | median abs error | median signed error | worst abs error (point) "
           "| median abs error, comm hidden |" % title,
           "|---|---|---|---|---|---|"]
    for g in sorted(groups, key=lambda g: (-len(groups[g]), g)):
        errs = [r["error_pct"] for r in groups[g]]
        worst = max(groups[g], key=lambda r: abs(r["error_pct"]))
        hidden = [abs(r["error_comm_hidden_pct"]) for r in groups[g] if "error_comm_hidden_pct" in r]
        out.append("| %s | %d | %.0f%% | %+.0f%% | %.0f%% (%s) | %s |" % (
            g, len(errs), statistics.median(abs(e) for e in errs), statistics.median(errs),
            abs(worst["error_pct"]), worst["id"],
            "%.0f%%" % statistics.median(hidden) if hidden else "—"))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default=os.path.join("build", "app", "envelope-cli"),
                    help="envelope-cli binary (default build/app/envelope-cli)")
    ap.add_argument("--points", default=DEFAULT_POINTS, help="points.json (default: %(default)s)")
    ap.add_argument("--json", help="also write the rows as JSON to this file")
    args = ap.parse_args()

    cli = args.cli
    if not os.path.isabs(cli) and not os.path.exists(cli):
        cli = os.path.join(ROOT, cli)
    with open(args.points) as f:
        doc = json.load(f)
    folder = os.path.dirname(os.path.abspath(args.points))
    rows = [run_point(cli, folder, p) for p in doc["points"]]

    print("## Training throughput: published vs estimated (tokens/s/GPU)\n")
    print("error = (estimated - measured) / measured. Shares are of the estimated step. "
          "`fits: no` = the estimator's memory model says the plan does not fit; its step comes "
          "from the explanations. GPU `x*` = custom GPU object timed with kernel table x. "
          "`error, comm hidden` = the error if the step's exposed communication were hidden "
          "entirely (estimate x step / (step - exposed)): the most that unmodelled overlaps could move it.\n")
    print(table(rows))
    print()
    print(summary(rows, None, "overall"))
    print()
    print(summary(rows, "gpu", "GPU"))
    print()
    print(summary(rows, "framework", "framework"))
    print()
    print(summary(rows, "family", "source"))
    skipped = doc.get("skipped", [])
    if skipped:
        print("\nSkipped: " + "; ".join("%s (%s)" % (s["id"], s["why"]) for s in skipped))
    failed = [r for r in rows if "error" in r]
    if failed:
        print("\nFailed: " + "; ".join("%s (%s)" % (r["id"], r["error"]) for r in failed))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Generate docs/validation.md: Envelope's estimates against published measurements of real runs.

Reads tests/data/validation/points.json (one plan per point, the measured value in the metric
the publication reports), runs `envelope-cli estimate PLAN --format json` for each
plan and writes the table: point, conditions, measured, estimate, error, and the component that
explains a miss. Python 3 standard library only.

    tools/validation_table.py [--cli build/app/envelope-cli] [-o docs/validation.md]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "validation")
GIB = 2**30

# The result keys that make up each training figure, largest first, to name the component
# behind a miss.
TRAINING_PARTS = [
    ("activations", "training/per_gpu_bytes/activations"),
    ("logits + loss", "training/logits_bytes"),
    ("optimizer", "training/per_gpu_bytes/optimizer"),
    ("gradients", "training/per_gpu_bytes/gradients"),
    ("weights", "training/per_gpu_bytes/weights"),
    ("framework buffers", "training/buffer_bytes"),
]
SERVING_PARTS = [
    ("weights", "serving/weights_bytes_per_gpu"),
]


def lookup(result, key):
    node = result
    for part in key.replace(".", "/").split("/"):
        node = node[part]
    return node


def estimate(cli, plan_path):
    out = subprocess.run([cli, "estimate", plan_path, "--format", "json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def fmt_value(value, unit):
    if unit == "GiB":
        return "%.2f GiB" % (value / GIB)
    if unit == "tokens":
        return "{:,.0f} tokens".format(value)
    return "{:,.0f} {}".format(value, unit)


def explain_throughput_miss(result, error):
    """Names the term of the step behind a throughput miss: the kernel efficiency the run
    implies (the step time scales with it while compute dominates), or the exposed
    communication / bubble when they are a large share of the step."""
    t = result["training"]
    step = t["step_time_s"]
    comm = t["communication"]
    parts = [("exposed communication", comm.get("exposed_s", 0)),
             ("pipeline bubble", comm.get("pp_bubble_s", 0))]
    name, seconds = max(parts, key=lambda p: p[1])
    compute = t["compute_time_s"]
    # The efficiency_scale that would meet the measurement with the other terms unchanged
    # (what `envelope-cli calibrate --tokens-per-s` fits): the op-timed compute over the time
    # the run left for it.
    measured_step = step * (1 + error)
    rest = step - compute
    implied = compute / (measured_step - rest) if measured_step > rest else float("inf")
    text = "%s; the run implies efficiency_scale %.2f" % (t.get("timing_source", ""), implied)
    if seconds > 0.15 * step:
        text += "; %s %.0f%% of the step" % (name, 100 * seconds / step)
    return text


def explain_miss(check, result, error):
    if abs(error) < 0.05:
        return ""
    if check["metric"] in ("reserved", "allocated", "device"):
        parts = [(name, lookup(result, key)) for name, key in TRAINING_PARTS]
        name, value = max(parts, key=lambda p: p[1])
        return "largest component: %s %.1f GiB" % (name, value / GIB)
    if check["metric"] == "throughput":
        return explain_throughput_miss(result, error)
    return "activation peak %.2f GiB, overhead %.2f GiB" % (
        result["serving"].get("activation_peak_bytes", 0) / GIB,
        result["serving"].get("overhead_bytes", 0) / GIB)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", default=os.path.join(ROOT, "build", "app", "envelope-cli"))
    parser.add_argument("-o", "--output", default=os.path.join(ROOT, "docs", "validation.md"))
    args = parser.parse_args()

    with open(os.path.join(DATA, "points.json")) as f:
        points = json.load(f)

    rows = []
    errors = {}
    for point in points["points"]:
        result = estimate(args.cli, os.path.join(DATA, point["id"] + ".json"))
        for check in point["checks"]:
            scale = GIB if check["unit"] == "GiB" else 1.0
            measured = check["measured"] * scale
            value = lookup(result, check["key"])
            error = value / measured - 1.0
            group = {"reserved": "training memory", "allocated": "training memory",
                     "device": "training memory"}.get(check["metric"], check["metric"])
            errors.setdefault(group, []).append(abs(error))
            rows.append("| %s | %s | %s (%s) | %s | %s | %+.1f%% | %s |" % (
                point["id"], point["conditions"], check["metric"], check["key"],
                fmt_value(measured, check["unit"]), fmt_value(value, check["unit"]), 100 * error,
                explain_miss(check, result, error)))

    lines = [
        "# Validation against published runs",
        "",
        "Generated by `tools/validation_table.py` from `tests/data/validation/` (one plan per "
        "published measurement; the measurements and their conditions are in `points.json`, "
        "taken from the calibration set). Do not edit by hand: run "
        "`python3 tools/validation_table.py` after building `envelope-cli`.",
        "`tests/core/test_validation.cpp` estimates the same plans and guards the medians below. "
        "Step times are validated on more runs (Korthikanti et al. 2022 Table 5, 38 published "
        "training runs, 24 serving runs) in [validation-timing.md](validation-timing.md).",
        "",
        "Each figure is compared in the metric the publication reports: `reserved` is "
        "`training.allocator_reserved_bytes` (torch.cuda max_memory_reserved, torchtitan's logged "
        "memory), `allocated` is `training.allocated_bytes` (max_memory_allocated / peak active "
        "bytes), `kv` is the engine's KV pool as its startup log reports it "
        "(`serving.kv_budget_bytes`: vLLM's \"Available KV cache memory\", SGLang's K + V "
        "size), `kv-tokens` its token count (`serving.max_tokens`: vLLM's \"GPU KV cache "
        "size\", SGLang's max_total_num_tokens).",
        "",
        "## Summary (|estimate / measured - 1|)",
        "",
        "| group | points | median | worst |",
        "|---|---|---|---|",
    ]
    for group, values in errors.items():
        lines.append("| %s | %d | %.1f%% | %.1f%% |" % (
            group, len(values), 100 * statistics.median(values), 100 * max(values)))
    lines += [
        "",
        "## Points",
        "",
        "| point | conditions | metric | measured | estimate | error | what explains a miss |",
        "|---|---|---|---|---|---|---|",
    ] + rows
    if points.get("open"):
        lines += ["", "## Expressible, not calibrated (open misses)", "",
                  "Outside the summary above: each plan runs, its miss is not yet explained.", "",
                  "| point | conditions | metric | measured | estimate | error | why it is open |",
                  "|---|---|---|---|---|---|---|"]
        for o in points["open"]:
            result = estimate(args.cli, os.path.join(DATA, o["id"] + ".json"))
            scale = GIB if o["unit"] == "GiB" else 1.0
            value = lookup(result, o["key"])
            lines.append("| %s | %s | %s | %s | %s | %+.1f%% | %s |" % (
                o["id"], o["conditions"], o["key"], fmt_value(o["measured"] * scale, o["unit"]),
                fmt_value(value, o["unit"]), 100 * (value / (o["measured"] * scale) - 1.0),
                o["reason"]))
    if points.get("skipped"):
        lines += ["", "## Not yet expressible", ""]
        for s in points["skipped"]:
            lines.append("- `%s`: %s" % (s["id"], s["reason"]))
    extra = os.path.join(DATA, "notes.md")
    if os.path.exists(extra):
        with open(extra) as f:
            lines += ["", f.read().rstrip()]
    with open(args.output, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Dev-only: the "launch_floor" block of a kernel table from a lent card's small-kernel runs.

Reads the JSON files that `tools/device/measure_h100.py kernel_floor` and `... kernel_sweep` wrote
on one card (each kernel 32-64 times back to back in one CUDA graph) and prints the two figures
Envelope's timing adds to every memory-bound kernel (core/kernels/timing.cpp, launchFloor):

  pointwise_us  median time of the pointwise kernels (residual add, silu and mul) at one row,
                where the bytes take nanoseconds
  reduction_us  median time of the row reductions (F.rms_norm, softmax) over one row of 4,096

Usage: launch_floor.py MEASURED.json [MEASURED.json ...]
"""
import json
import statistics
import sys


def samples(docs):
    pointwise, reduction = [], []
    for d in docs:
        f = d.get("kernel_floor", {})
        pointwise += [f[k] for k in ("add_b1_us", "silu_mul_b1_us") if k in f]
        reduction += [f[k] for k in ("rms_norm_b1_us",) if k in f]
        for r in d.get("kernel_sweep", []):
            if r["rows"] != 1:
                continue
            if r["kernel"] in ("add", "silu_mul") and r["width"] in (4096, 14336):
                pointwise.append(r["us"])
            if r["kernel"] in ("rms_norm", "softmax") and r["width"] == 4096:
                reduction.append(r["us"])
    return pointwise, reduction


if __name__ == "__main__":
    p, r = samples([json.load(open(f)) for f in sys.argv[1:]])
    print(json.dumps({"pointwise_us": round(statistics.median(p), 2),
                      "reduction_us": round(statistics.median(r), 2),
                      "samples": {"pointwise": len(p), "reduction": len(r)}}))

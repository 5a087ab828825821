#!/usr/bin/env python3
"""Dev-only: the "grouped_gemm" block of a kernel table from a lent card's grouped-GEMM run.

Reads the JSON that `tools/device/measure_h100.py grouped_gemm` wrote (rows of expert GEMMs of
one EP rank: torch._grouped_mm against one cuBLAS GEMM of all rows stacked, both timed on the
same card) and prints the two figures Envelope's timing uses (core/kernels/timing.cpp):

  time_factor                 median of grouped / stacked time over the rows with >= 1024 rows
                              per expert (compute-bound: the grouped launch's own cost)
  weight_stream_hbm_fraction  median of expert weight bytes / grouped time over the rows with
                              <= 64 rows per expert (weight-bound: every expert's matrix read
                              once), over the card's HBM bandwidth as its preset states it

Usage: grouped_factors.py MEASURED.json HBM_BYTES_PER_S
"""
import json
import statistics
import sys


def factors(rows, hbm):
    compute = [r["grouped_us"] / r["stacked_us"] for r in rows if r["m_per_expert"] >= 1024]
    stream = [r["weight_bytes"] / (r["grouped_us"] * 1e-6) / hbm
              for r in rows if r["m_per_expert"] <= 64]
    return statistics.median(compute), statistics.median(stream), len(compute), len(stream)


if __name__ == "__main__":
    data = json.load(open(sys.argv[1]))
    f, w, nf, nw = factors([r for r in data["grouped_gemm"] if "grouped_us" in r], float(sys.argv[2]))
    print(json.dumps({"time_factor": round(f, 3), "weight_stream_hbm_fraction": round(w, 3),
                      "rows": {"compute_bound": nf, "weight_bound": nw}}))

#!/usr/bin/env python3
"""Draws parsley-bench --growth's CSV: median latency (p50) and throughput by class size, one panel per backend.
Usage: plot-growth.py growth.csv growth.png   (needs matplotlib: pip install matplotlib)"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = list(csv.DictReader(open(sys.argv[1])))
backends = [b for b in ("SQLite", "PostgreSQL") if any(r["backend"] == b for r in rows)]
fig, axes = plt.subplots(2, len(backends), figsize=(6.5 * len(backends), 8), squeeze=False)
for col, backend in enumerate(backends):
    mine = [r for r in rows if r["backend"] == backend]
    scenarios = list(dict.fromkeys(r["scenario"] for r in mine))
    for scenario in scenarios:
        points = sorted((int(r["objects"]), float(r["rps"]), float(r["p50_ms"])) for r in mine if r["scenario"] == scenario)
        xs = [p[0] for p in points]
        axes[0][col].plot(xs, [p[2] for p in points], marker="o", label=scenario)
        axes[1][col].plot(xs, [p[1] for p in points], marker="o", label=scenario)
    for row, label in ((0, "p50 latency, ms (64 connections)"), (1, "requests/s")):
        ax = axes[row][col]
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("objects in the class")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    axes[0][col].set_title(f"Parsley on {backend}: cost by class size")
axes[0][0].legend(fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)

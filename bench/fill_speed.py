#!/usr/bin/env python3
"""opval's input fill against torch.randn, side by side in one process (issue 19 §4).

For each square GEMM size, the inputs of `matmul m=n=k=N dt=f32:f32:f32` as every backend gets
them (Problem.make_inputs: allocation and the default normal fill of A and B, with the fill's
own pass for the magnitudes of C/bias) against torch.randn of the same two shapes (allocation
included), alternating A B A B, both on every core the process has. Prints the medians and
their ratio.

    .venv/bin/python bench/fill_speed.py [--sizes 1024,2048,4096] [--repeats 15]
"""
import argparse
import statistics
import time

import torch

import opval


def timed(f) -> float:
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1024,2048,4096")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    print(f"threads: torch {torch.get_num_threads()}, opval OpenMP default")
    print(f"{'N':>6} {'opval ms':>9} {'torch.randn ms':>15} {'opval/torch':>12}")
    for n in map(int, args.sizes.split(",")):
        problem = opval.Problem(f"matmul m={n} n={n} k={n} dt=f32:f32:f32")
        ours, theirs = [], []
        for _ in range(args.repeats):
            ours.append(timed(lambda: problem.make_inputs(1)))
            theirs.append(timed(lambda: (torch.randn(n, n), torch.randn(n, n))))
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"{n:>6} {a * 1e3:>9.2f} {b * 1e3:>15.2f} {a / b:>12.2f}")


if __name__ == "__main__":
    main()

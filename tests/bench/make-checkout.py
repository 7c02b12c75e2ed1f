#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""make-checkout.py ROOT N: N small C files in directories of 100, fifty
directories of those per top directory, below the existing directory ROOT:
the checkout of the git status benchmarks (bench-git.sh, bench-run.sh)."""
import os
import sys

root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%03d" % (i // 100 // 50), "e%03d" % (i // 100))
    if i % 100 == 0:
        os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d.c" % i), "w") as f:
        f.write("int f%d;\n" % i)

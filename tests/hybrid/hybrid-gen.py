#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Generated trees and rule sets for the hybrid-view test (test-hybrid.sh).

  hybrid-gen.py tree BASE SEED     make a tree below BASE, print a policy file
                                   (readonly = /, rules inside BASE, BASE a
                                   hybrid tree) and then, after a line "--",
                                   the paths to check
  hybrid-gen.py probe PATH...      (run inside the sandbox) for each path:
                                   lstat, read (file contents or listing),
                                   write (open for writing, or create and
                                   remove a new name in a directory), and
                                   the same for a name that does not exist yet
"""
import errno
import os
import random
import sys

NAMES = ["a", "b", "c", "src", "lib", "keys", "docs", "x.pem", "id_rsa", ".env",
         "notes.txt", "data.key", "secret", "config", "hooks", ".git"]
DIR_NAMES = ["a", "b", "c", "src", "lib", "keys", "docs", "secret", ".git", "hooks"]
GLOBS = ["*.pem", "*.key", "id_rsa*", ".env", "secret", "s*t", "[ab]", "*.txt", "config",
         "hooks"]


def make_tree(base, rnd):
    dirs, files = [], []

    def fill(d, depth):
        for name in rnd.sample(DIR_NAMES, rnd.randint(1, 4)) if depth < 4 else []:
            p = os.path.join(d, name)
            os.mkdir(p)
            dirs.append(p)
            fill(p, depth + 1)
        for name in rnd.sample(NAMES, rnd.randint(0, 4)):
            p = os.path.join(d, name)
            if os.path.exists(p):
                continue
            with open(p, "w") as f:
                f.write("content of %s\n" % p)
            files.append(p)

    fill(base, 0)
    return dirs, files


def gen(base, seed):
    rnd = random.Random(seed)
    dirs, files = make_tree(base, rnd)
    rules = {"deny-read": [], "deny-write": [], "writable": [], "readonly": ["/"]}
    for _ in range(rnd.randint(0, 5)):
        kind = rnd.choice(["deny-read", "deny-read", "deny-write", "writable", "readonly"])
        # names at any depth (recursive, floating) leave nothing below the
        # tree uniform: only every third rule set has them
        shape = rnd.randint(0, 9 if seed % 3 == 0 else 6)
        if kind in ("writable", "readonly"):
            if dirs:
                rules[kind].append(rnd.choice(dirs))
            continue
        if shape < 3 and files:
            rules[kind].append(rnd.choice(files))          # a literal file
        elif shape < 5 and dirs:
            rules[kind].append(rnd.choice(dirs))           # a literal directory
        elif shape < 7 and dirs:
            rules[kind].append(rnd.choice(dirs) + "/" + rnd.choice(GLOBS))   # anchored glob
        elif shape < 8:
            rules[kind].append(base + "/**/" + rnd.choice(GLOBS))            # recursive
        else:
            rules[kind].append(rnd.choice(GLOBS))          # a name at any depth
    # A hard link to a literally denied file, elsewhere in the tree: the view
    # denies it by identity, so its directory must not be bound.
    # (and then nothing on that file system is bound: every fourth set)
    if files and seed % 4 == 0:
        target = rnd.choice(files)
        rules["deny-read"].append(target)
        d = rnd.choice(dirs) if dirs else base
        link = os.path.join(d, "hardlink-%d" % seed)
        os.link(target, link)
        files.append(link)
    print("[policy]\nprofile = none\n[filesystem]\nhybrid-trees = %s" % base)
    for key in ("readonly", "writable", "deny-read", "deny-write"):
        if rules[key]:
            print("%s = %s" % (key, ";".join(rules[key])))
    print("--")
    for p in [base] + dirs + files:
        print(p)


def err(fn):
    try:
        fn()
        return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def probe(paths):
    for p in paths:
        st = [None]

        def do_lstat():
            st[0] = os.lstat(p)

        out = [p, "lstat=" + err(do_lstat)]
        if st[0] is not None and os.path.isdir(p):
            out.append("read=" + err(lambda: os.listdir(p)))

            def create():
                q = os.path.join(p, "new-name-from-the-probe")
                fd = os.open(q, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                os.close(fd)
                os.unlink(q)

            out.append("write=" + err(create))
            out.append("new=" + err(lambda: os.lstat(os.path.join(p, "x.pem"))))
        elif st[0] is not None:
            def read():
                with open(p, "rb") as f:
                    f.read(64)

            def write():
                os.close(os.open(p, os.O_WRONLY))

            out.append("read=" + err(read))
            out.append("write=" + err(write))
        print(" ".join(out))


if __name__ == "__main__":
    if sys.argv[1] == "tree":
        gen(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "probe":
        probe(sys.argv[2:])

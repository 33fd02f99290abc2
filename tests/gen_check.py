#!/usr/bin/env python3
"""Every example a generator writes is what is committed: runs each tool into
a scratch folder and compares the file sets and bytes with the repository's.

    tests/gen_check.py SOURCE_DIR SCRATCH_DIR
"""
import filecmp
import os
import shutil
import subprocess
import sys

GENERATED = [("tools/gen_allreduce.py", "traces/allreduce"), ("tools/gen_tp_ffn.py", "traces/tp_ffn")]


def main():
    src, scratch = sys.argv[1], sys.argv[2]
    failed = []
    for tool, folder in GENERATED:
        out = os.path.join(scratch, os.path.basename(folder))
        shutil.rmtree(out, ignore_errors=True)
        subprocess.run([sys.executable, os.path.join(src, tool), out], check=True)
        committed = os.path.join(src, folder)
        cmp = filecmp.dircmp(committed, out)
        _, mismatch, errors = filecmp.cmpfiles(committed, out, cmp.common_files, shallow=False)
        for what, names in (("only committed", cmp.left_only), ("only generated", cmp.right_only),
                            ("differs", mismatch), ("unreadable", errors)):
            failed += [f"{folder}/{n}: {what} (re-run {tool})" for n in names]
    for f in failed:
        print(f, file=sys.stderr)
    print(f"{len(GENERATED)} generators checked, {len(failed)} difference(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

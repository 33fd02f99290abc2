#!/usr/bin/env python3
"""Mutation testing of models/ (docs/testing.md, "Mutation testing").

  tools/mutate.py generate [--seed N] [--count N] > tools/mutants.tsv
      draws a catalogue of mutants from the sources of models/, seeded, spread
      over its folders and over the mutation kinds below.
  tools/mutate.py list [CATALOGUE]
      prints the catalogue with each mutant's diff line.
  tools/mutate.py run [CATALOGUE] [--only ID,ID..] [--resume] [--timeout S]
                      [--jobs N] [--test-jobs N] [--work DIR]
      applies each mutant in a scratch copy of the tree, rebuilds it
      incrementally (its own build directory, ccache), runs the whole suite
      (ctest, stopping at the first failure) and reports each mutant as
      killed, survived, timeout (counted as killed), build-failed,
      not-applicable or error (the machine failed: a full disk; none of the
      three counted). The tree itself is never modified.
      Results go to WORK/results.tsv (default WORK: build-mutate/, ignored by
      git). --only runs the listed mutants in the order listed; --resume
      keeps the results file and skips the mutants it already has; --tests
      REGEX runs only the matching tests (a kill by them is a kill; a
      survival is not a result).
  tools/mutate.py table [CATALOGUE] --results FILE [--results FILE..]
      the catalogue with the results as a Markdown table, and the score.

Kinds: rel (a relational operator moved across its boundary or negated),
arith (+ and - swapped), term (one '+ term' of a sum dropped), const (an
integer literal off by one), stmt (an expression statement dropped), logic
(&& and || swapped), bool (true and false swapped).

A mutant is located by the text of its line (the line number is only the
hint where several lines match), so the catalogue survives edits elsewhere in
a file; a mutant whose line is gone or no longer holds the mutated text at
its column (the model changed since the catalogue was drawn) is reported as
not-applicable, never as killed.

CPU: the run is long (one incremental build and one suite run per mutant);
run it under `nice -n 19` with --jobs 1 on a shared machine, and use --only
and --resume to iterate.
"""
import argparse
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CATALOGUE = os.path.join(ROOT, "tools", "mutants.tsv")
FOLDERS = ["models/runtime", "models/aicpu", "models/aicore", "models/gm", "models/ffts", "models/chip",
           "models/common", "models/interconnect"]
# Share of the catalogue per folder (by weight; every folder gets at least 4).
FOLDER_WEIGHT = {"models/runtime": 26, "models/aicpu": 22, "models/aicore": 16, "models/gm": 16,
                 "models/ffts": 5, "models/chip": 5, "models/common": 12, "models/interconnect": 4}
KIND_WEIGHT = {"rel": 30, "stmt": 18, "term": 14, "const": 14, "arith": 10, "logic": 8, "bool": 6}

# Hand-picked mutants, appended to the seeded draw (ids H01..): the three the
# issue that introduced this tool named, and the boundary of each capacity rule.
# (file, a substring of the line, old text, new text, kind)
HAND = [
    ("models/gm/gm.cpp", "const Time cost = gm_.fence +", " + (c.dirty_lines ? transfer(c.dirty_lines * line_bytes_) : 0)",
     "", "term"),  # a fence no longer waits for the write-back of the dirty lines
    ("models/runtime/ring.cpp", "if (tail_ == 0 || tail_ < dep_reclaim_watermark_ + interval)", "tail_ <", "tail_ <=", "rel"),
    ("models/runtime/ring.cpp", "} else if (s.tail > size) {", ">", ">=", "rel"),  # heap wrap
    ("models/runtime/ring.cpp", "} else if (s.tail - s.top > size) {", ">", ">=", "rel"),  # strict gap
    ("models/runtime/ring.cpp", "if (s.top + size <= heap_cap_) {", "<=", "<", "rel"),  # fit at the end
    ("models/runtime/ring.cpp", "} else if (s.top == s.tail && size <= heap_cap_) {", "<=", "<", "rel"),  # rebase
    ("models/runtime/ring.h", "bool window_has_room() const", "<", "<=", "rel"),
    ("models/runtime/ring.h", "return whole_graph_ || dep_top_ - dep_tail_ + n <= dep_cap_;", "<=", "<", "rel"),
    ("models/runtime/ring.h", "return whole_graph_ || spill_used_ + n <= dep_cap_;", "<=", "<", "rel"),
    ("models/runtime/tensormap.h", "bool has_room(std::uint64_t n) const", "<=", "<", "rel"),
    ("models/runtime/tensormap.cpp", "if (alive - last_cleanup_[ring] >= cleanup_interval_", ">=", ">", "rel"),
    ("models/runtime/runtime.cpp", "if (depth > max_user_scope_depth(platform_)) {", ">", ">=", "rel"),
    ("models/runtime/runtime.cpp", "scopes_.back().tasks.size() >= rings_[ring].window() - 1", ">=", ">", "rel"),
]


# ------------------------------------------------------------------ lexing

def code_mask(lines):
    """Per line, the text with comments, string and char literals blanked
    (same length), and whether the line held a string literal."""
    out, has_str = [], []
    in_block = False
    for line in lines:
        buf = list(line)
        i, n, saw_str = 0, len(line), False
        while i < n:
            if in_block:
                j = line.find("*/", i)
                end = n if j < 0 else j + 2
                for k in range(i, end):
                    buf[k] = " "
                if j >= 0:
                    in_block = False
                i = end
                continue
            c = line[i]
            if line.startswith("//", i):
                for k in range(i, n):
                    buf[k] = " "
                break
            if line.startswith("/*", i):
                in_block = True
                continue
            if c == '"' or c == "'":
                saw_str = saw_str or c == '"'
                if c == '"' and i > 0 and line[i - 1] == "R":  # raw string on one line
                    m = re.match(r'R"([^(]*)\(', line[i - 1:])
                    end = line.find(")" + (m.group(1) if m else "") + '"', i)
                    end = n if end < 0 else end + len(m.group(1) if m else "") + 2
                else:
                    k = i + 1
                    while k < n and line[k] != c:
                        k += 2 if line[k] == "\\" else 1
                    end = min(k + 1, n)
                for k in range(i + 1, end - 1):
                    buf[k] = " "
                i = end
                continue
            i += 1
        out.append("".join(buf))
        has_str.append(saw_str)
    return out, has_str


# --------------------------------------------------------------- operators

REL = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
DECL_START = re.compile(r"^\s*(return\b|break\b|continue\b|case\b|default\b|goto\b|else\b|"
                        r"(const|constexpr|static|auto|int|unsigned|bool|double|float|char|void|"
                        r"std::|Time\b|Task\b|Tensor\b|typename|using|namespace|template|struct|class|enum)\b)")
LVALUE = r"[A-Za-z_][\w]*(?:(?:\.|->)[A-Za-z_]\w*|\[[^\]]*\]|\(\))*"
ASSIGN_STMT = re.compile(r"^\s*(\+\+|--)?" + LVALUE + r"(\+\+|--)?\s*((\+|-|\||&|\*)?=\s*[^=].*)?;\s*$")
CALL_STMT = re.compile(r"^\s*" + LVALUE + r"\s*\(.*\)\s*;\s*$")


def operand_end(code, i):
    """End of the operand starting at i: up to a top-level + - ; , ) ] ? : or
    a relational/logical operator."""
    depth, n = 0, len(code)
    while i < n:
        c = code[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return i
            depth -= 1
        elif depth == 0:
            if c in ";,?" or (c == ":" and code[i + 1:i + 2] != ":" and code[i - 1:i] != ":") or \
                    code.startswith(" + ", i) or code.startswith(" - ", i) or \
                    re.match(r" (<|>|<=|>=|==|!=|&&|\|\|) ", code[i:]):
                return i
        i += 1
    return n


def candidates(path, lines):
    code, has_str = code_mask(lines)
    found = []  # (line_no, kind, col, old, new)
    prev_code = ""
    for no, (line, c, s) in enumerate(zip(lines, code, has_str), 1):
        stripped = c.strip()
        if not stripped or stripped.startswith("#") or "static_assert" in c:
            prev_code = stripped or prev_code
            continue
        # rel: operators with a space on both sides (templates and shifts have none)
        for m in re.finditer(r"(?<=\s)(<=|>=|==|!=|<|>)(?=\s)", c):
            if "template" in c:
                break
            found.append((no, "rel", m.start(), m.group(1), REL[m.group(1)]))
        for m in re.finditer(r"(?<=\s)(&&|\|\|)(?=\s)", c):
            found.append((no, "logic", m.start(), m.group(1), "||" if m.group(1) == "&&" else "&&"))
        for m in re.finditer(r"\b(true|false)\b", c):
            found.append((no, "bool", m.start(), m.group(1), "false" if m.group(1) == "true" else "true"))
        if not s:  # arithmetic on lines without string literals (no string concatenation)
            for m in re.finditer(r"(?<=\s)([+-])(?=\s)", c):
                found.append((no, "arith", m.start(), m.group(1), "-" if m.group(1) == "+" else "+"))
                if m.group(1) == "+":
                    end = operand_end(c, m.end() + 1)
                    found.append((no, "term", m.start() - 1, line[m.start() - 1:end], ""))
        for m in re.finditer(r"(?<![\w.])(\d+)(ull|u|ll|l)?(?![\w.])", c):
            if re.search(r"\[\s*$", c[:m.start()]) or "operator" in c:
                continue  # array indices and declarations
            v = int(m.group(1))
            new = str(v + 1) if v < 2 or no % 2 else str(v - 1)
            found.append((no, "const", m.start(), m.group(1), new))
        # stmt: an expression statement on one line, not a declaration
        # (and a statement of its own: the previous code line ends one, or is
        # the head of a braceless if/for/else, which the ';' left in its place keeps)
        starts = prev_code.endswith((";", "{", "}", ")", ":")) or prev_code.endswith("else")
        if starts and not DECL_START.match(c) and (ASSIGN_STMT.match(c) or CALL_STMT.match(c)) and \
                not re.search(r"\b(if|for|while|switch)\b", c):
            found.append((no, "stmt", len(line) - len(line.lstrip()), line[:len(c.rstrip())].strip(), ";"))
        prev_code = stripped
    return found


# ---------------------------------------------------------------- catalogue

def sources(folder):
    d = os.path.join(ROOT, folder)
    return sorted(os.path.join(folder, f) for f in os.listdir(d) if f.endswith((".cpp", ".h")))


def read_lines(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read().split("\n")


def includers():
    """For each header of models/, how many .cpp files of the tree include it
    (directly or not): what a mutant of it costs to rebuild."""
    inc = {}
    files = subprocess.run(["git", "ls-files", "*.cpp", "*.h"], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                           check=True).stdout.split()
    for f in files:
        with open(os.path.join(ROOT, f), errors="replace") as h:
            inc[f] = set(re.findall(r'^#include "([^"]+)"', h.read(), re.M))
    count = {}
    for f in files:
        if not f.endswith(".cpp"):
            continue
        seen, todo = set(), [f]
        while todo:
            for d in inc.get(todo.pop(), ()):
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        for d in seen:
            count[d] = count.get(d, 0) + 1
    return count


def generate(seed, count):
    rng = random.Random(seed)
    rebuilds = includers()
    total_w = sum(FOLDER_WEIGHT.values())
    catalogue = []
    for folder in FOLDERS:
        want = max(4, round(count * FOLDER_WEIGHT[folder] / total_w))
        pool = {}
        for path in sources(folder):
            lines = read_lines(path)
            for (no, kind, col, old, new) in candidates(path, lines):
                pool.setdefault(kind, []).append((path, no, kind, col, old, new, lines[no - 1]))
        kinds = [k for k in KIND_WEIGHT if pool.get(k)]
        picked, seen_lines = [], set()
        tries = 0
        while len(picked) < want and tries < 10000:
            tries += 1
            kind = rng.choices(kinds, weights=[KIND_WEIGHT[k] for k in kinds])[0]
            # A header's mutant rebuilds every file that includes it: a line of a
            # header included by n files is drawn with weight min(1, 3/n).
            cand = rng.choices(pool[kind], weights=[min(1.0, 3.0 / rebuilds.get(c[0], 1)) if c[0].endswith(".h")
                                                    else 1.0 for c in pool[kind]])[0]
            key = (cand[0], cand[1])
            if key in seen_lines:  # one mutant per line: spread them out
                continue
            seen_lines.add(key)
            picked.append(cand)
        picked.sort(key=lambda c: (c[0], c[1], c[3]))
        catalogue.extend(picked)
    rows = []
    for i, (path, no, kind, col, old, new, text) in enumerate(catalogue, 1):
        rows.append({"id": "M%03d" % i, "file": path, "line": no, "kind": kind, "col": col,
                     "old": old, "new": new, "text": text})
    drawn = {(r["file"], r["line"], r["col"], r["old"], r["new"]) for r in rows}
    for i, (path, anchor, old, new, kind) in enumerate(HAND, 1):
        lines = read_lines(path)
        hits = [n for n, l in enumerate(lines) if anchor in l]
        if len(hits) != 1:
            sys.exit("mutate: hand mutant %d: %d lines of %s hold %r" % (i, len(hits), path, anchor))
        text = lines[hits[0]]
        col = text.find(old, text.find(anchor) if old not in anchor else text.find(anchor) + anchor.find(old))
        if (path, hits[0] + 1, col, old, new) in drawn:
            continue  # the seeded draw has it already
        rows.append({"id": "H%02d" % i, "file": path, "line": hits[0] + 1, "kind": kind, "col": col,
                     "old": old, "new": new, "text": text})
    return rows


def esc(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t")


def unesc(s):
    return s.replace("\\t", "\t").replace("\\\\", "\\")


# Output that says the machine failed the build or a test (a full disk, no
# memory): such a mutant is reported as `error`, not counted, and is to be run again.
ENV_FAULT = re.compile(r"No space left on device|Cannot allocate memory|std::bad_alloc|virtual memory exhausted")
# In the suite, which runs under the memory cap the unmutated suite passed
# under, running out of memory is the mutant's doing (a kill); a full disk is not.
SUITE_FAULT = re.compile(r"No space left on device")
NA = "not-applicable"  # the mutant's line is gone or changed: not run, not counted

HEADER = "# id\tfile\tline\tkind\tcol\told\tnew\tline text (the anchor)\n"


def write_catalogue(rows, out, seed, count):
    out.write("# npusim mutation catalogue: tools/mutate.py generate --seed %d --count %d\n" % (seed, count))
    out.write("# Hand-added mutants may follow (ids H..). docs/testing.md has the results.\n")
    out.write(HEADER)
    for r in rows:
        out.write("\t".join([r["id"], r["file"], str(r["line"]), r["kind"], str(r["col"]), esc(r["old"]),
                             esc(r["new"]), esc(r["text"])]) + "\n")


def read_catalogue(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            p = line.rstrip("\n").split("\t")
            rows.append({"id": p[0], "file": p[1], "line": int(p[2]), "kind": p[3], "col": int(p[4]),
                         "old": unesc(p[5]), "new": unesc(p[6]), "text": unesc(p[7])})
    return rows


def locate(m, lines):
    """Index of the mutant's line in `lines` (nearest to its recorded line), or None."""
    hits = [i for i, l in enumerate(lines) if l == m["text"]]
    if not hits:
        return None
    return min(hits, key=lambda i: abs(i + 1 - m["line"]))


def apply(m, lines):
    """The mutated file text, or None if the mutant no longer applies."""
    i = locate(m, lines)
    if i is None:
        return None
    line, col = lines[i], m["col"]
    if m["kind"] == "stmt":
        new_line = line[:col] + ";  // mutant: statement dropped"
    else:
        if line[col:col + len(m["old"])] != m["old"]:
            return None
        new_line = line[:col] + m["new"] + line[col + len(m["old"]):]
    out = list(lines)
    out[i] = new_line
    return "\n".join(out)


def diff_line(m):
    if m["kind"] == "stmt":
        return "drop `%s`" % m["old"]
    if m["kind"] == "term":
        return "drop `%s`" % m["old"].strip()
    return "`%s` -> `%s`" % (m["old"], m["new"])


# ---------------------------------------------------------------------- run

# The private writable memory (RLIMIT_DATA: heap and anonymous mappings) of
# each test process and of ctest: a mutant that turns a loop into an endless
# one that allocates (M020 of the seed-10 catalogue, `++it` dropped in the
# tensormap lookup, grew two test processes to 11 GB each on a 24 GB machine)
# fails its test instead of taking the machine. npusim's own runs need well
# under 1 GB. Not RLIMIT_AS: chromium (the report's browser test) reserves
# far more address space than that, none of it writable.
SUITE_DATA = 4 << 30


def cap_memory():
    resource.setrlimit(resource.RLIMIT_DATA, (SUITE_DATA, SUITE_DATA))


def sh(cmd, cwd, timeout=None, log=None, capped=False):
    """Runs cmd in its own process group: on a timeout the whole group (ctest
    and the test processes it started) is killed. (status or None, output).
    capped: the data segment (private writable memory) of cmd and its children is SUITE_DATA."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                         start_new_session=True, preexec_fn=cap_memory if capped else None)
    try:
        out, _ = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        rc = None
    except BaseException:  # interrupted: the build or suite goes with us
        os.killpg(p.pid, signal.SIGKILL)
        raise
    if log:
        with open(log, "a") as f:
            f.write("$ %s\n%s\n%s" % (" ".join(cmd), out, "[timeout after %ss]\n" % timeout if rc is None else ""))
    return rc, out


def copy_tree(work):
    """The tracked files of the tree (with uncommitted edits), copied into work/src."""
    src = os.path.join(work, "src")
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, stdout=subprocess.PIPE,
                           text=True, check=True).stdout.split("\n")
    for f in files:
        if not f or not os.path.isfile(os.path.join(ROOT, f)):
            continue
        dst = os.path.join(src, f)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        a = os.path.join(ROOT, f)
        # Copy only what changed, so an unchanged file keeps its timestamp and
        # is not rebuilt; a changed one gets the time of the copy (not the
        # tree's: an object rebuilt for an earlier mutant may be newer than
        # that, and make would keep it).
        if not os.path.exists(dst) or open(a, "rb").read() != open(dst, "rb").read():
            shutil.copyfile(a, dst)
            shutil.copymode(a, dst)
    return src


def stop(signum, _frame):
    raise KeyboardInterrupt("signal %d" % signum)


def run(args):
    # SIGTERM, and SIGINT even where a background job ignores it, stop the run
    # cleanly: the running build or suite is killed, the scratch file restored.
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    rows = read_catalogue(args.catalogue)
    if args.only:
        by_id = {r["id"]: r for r in rows}
        ids = [i for i in args.only.split(",") if i]
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            sys.exit("mutate: no mutant %s in %s" % (", ".join(unknown), args.catalogue))
        rows = [by_id[i] for i in ids]
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    results_path = args.results or os.path.join(work, "results.tsv")
    if args.resume and os.path.exists(results_path):
        done = read_results(results_path)
        rows = [r for r in rows if r["id"] not in done]
        print("mutate: resuming: %d mutants in %s already, %d to run" % (len(done), results_path, len(rows)),
              flush=True)
    else:
        with open(results_path, "w") as f:
            f.write("# id\tstatus\tseconds\tfirst failing test\n")
    src = copy_tree(work)
    # The build directory inside the copy, as build/ is in the tree: with
    # ccache's base_dir the unchanged files' compilations are cache hits.
    build = os.path.join(src, "build")
    # ccache: paths under the scratch copy are hashed relative to it, so its
    # compilations are hits on the tree's own build (made with base_dir above
    # the tree) wherever the source is the same, wherever WORK is.
    os.environ["CCACHE_BASEDIR"] = src
    log = os.path.join(work, "mutate.log")
    if not args.resume:
        open(log, "w").close()
    env_flags = ["-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DNPUSIM_TEST_GLOB=test_*"]
    rc, out = sh(["cmake", "-S", src, "-B", build] + env_flags, src, log=log)
    if rc != 0:
        sys.exit("mutate: cmake failed (see %s)" % log)
    jobs = str(args.jobs)
    test_jobs = str(args.test_jobs or args.jobs)

    def build_tree():
        return sh(["cmake", "--build", build, "-j", jobs], src, timeout=args.build_timeout, log=log)

    order = []  # the suite's test numbers, fastest first (from the unmutated run)

    def suite(timeout):
        cmd = ["ctest", "--test-dir", build, "-j", test_jobs, "--no-tests=error", "--stop-on-failure"]
        if args.tests:
            return sh(cmd + ["-R", args.tests], src, timeout=timeout, log=log, capped=True)
        if not order:
            return sh(cmd, src, timeout=timeout, log=log, capped=True)
        # Fastest first, in two passes (the first ~90 % of the tests by count,
        # then the slow rest): most mutants are killed by a unit test of their
        # own model, which is quick, and a killed mutant ends at its first
        # failure. Every test still runs for a survivor.
        cut = len(order) * 9 // 10
        t0 = time.time()
        out = ""
        for part in (order[:cut], order[cut:]):
            left = None if timeout is None else max(1, timeout - (time.time() - t0))
            rc, o = sh(cmd + ["-I", "0,0,0," + ",".join(str(n) for n in part)], src, timeout=left, log=log,
                       capped=True)
            out += o
            if rc != 0:
                return rc, out
        return 0, out

    rc, _ = build_tree()
    if rc != 0:
        sys.exit("mutate: the unmutated tree does not build (see %s)" % log)
    t0 = time.time()
    rc, out = suite(None)
    base = time.time() - t0
    if rc != 0:
        sys.exit("mutate: the suite fails on the unmutated tree (see %s)" % log)
    secs = {int(n): float(t) for n, t in re.findall(r"Test\s+#(\d+): .*?\s+Passed\s+([0-9.]+) sec", out)}
    order[:] = sorted(secs, key=lambda n: (secs[n], n))
    timeout = args.timeout or max(120, int(3 * base))
    print("mutate: baseline builds and passes; per-mutant suite timeout %ds; work %s" % (timeout, work), flush=True)

    results = []
    originals = {}
    for m in rows:
        path = os.path.join(src, m["file"])
        if m["file"] not in originals:
            with open(path) as f:
                originals[m["file"]] = f.read()
        text = apply(m, originals[m["file"]].split("\n"))
        if text is None:
            results.append((m, NA, 0, ""))
            with open(results_path, "a") as f:
                f.write("\t".join([m["id"], NA, "0", ""]) + "\n")
            print("%s %-14s %s:%d %s" % (m["id"], NA, m["file"], m["line"], diff_line(m)), flush=True)
            continue
        start = time.time()
        with open(log, "a") as f:
            f.write("\n===== %s %s:%d %s\n" % (m["id"], m["file"], m["line"], diff_line(m)))
        try:
            with open(path, "w") as f:
                f.write(text)
            rc, out = build_tree()
            if rc != 0:
                status, by = "build-failed", ""
            else:
                rc, out = suite(timeout)
                if rc is None:
                    status, by = "timeout", ""
                elif rc != 0:
                    status = "killed"
                    failed = re.findall(r"\d+ - (unit:.*?) \((?:Failed|Timeout|SEGFAULT|Subprocess aborted|"
                                        r"Child aborted|Exception)", out)
                    by = failed[0] if failed else "?"
                else:
                    status, by = "survived", ""
            fault = (ENV_FAULT if status == "build-failed" else SUITE_FAULT).search(out)
            if status == "killed" and not fault:  # the failing tests' output
                try:
                    with open(os.path.join(build, "Testing", "Temporary", "LastTest.log"), errors="replace") as f:
                        fault = SUITE_FAULT.search(f.read())
                except OSError:
                    pass
            if fault:  # the machine failed, not the suite: run it again
                status, by = "error", fault.group(0)
        finally:  # also when interrupted: the scratch tree never keeps a mutant
            with open(path, "w") as f:
                f.write(originals[m["file"]])
        secs = time.time() - start
        results.append((m, status, secs, by))
        with open(results_path, "a") as f:
            f.write("\t".join([m["id"], status, "%.0f" % secs, by]) + "\n")
        print("%s %-12s %4.0fs %s:%d %s%s" % (m["id"], status, secs, m["file"], m["line"], diff_line(m),
                                               ("  [" + by + "]") if by else ""), flush=True)
    # Leave the scratch tree unmutated and built.
    build_tree()
    summarize(results)


def summarize(results):
    count = {}
    for _, s, _, _ in results:
        count[s] = count.get(s, 0) + 1
    killed = count.get("killed", 0) + count.get("timeout", 0)
    scored = killed + count.get("survived", 0)
    print("\nmutate: %d mutants: %s" % (len(results), ", ".join("%s %d" % kv for kv in sorted(count.items()))))
    if scored:
        print("mutate: score %d/%d killed = %.1f%% (build-failed, not-applicable and error not counted)" %
              (killed, scored, 100.0 * killed / scored))
    by_folder = {}
    for m, s, _, _ in results:
        f = os.path.dirname(m["file"])
        k, n = by_folder.get(f, (0, 0))
        if s in ("killed", "timeout"):
            by_folder[f] = (k + 1, n + 1)
        elif s == "survived":
            by_folder[f] = (k, n + 1)
    for f in FOLDERS:
        if f in by_folder:
            print("  %-16s %d/%d" % (f, *by_folder[f]))
    surv = [m for m, s, _, _ in results if s == "survived"]
    if surv:
        print("mutate: survivors:")
        for m in surv:
            print("  %s %s:%d %s" % (m["id"], m["file"], m["line"], diff_line(m)))


def read_results(path):
    res = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            p = line.rstrip("\n").split("\t")
            res[p[0]] = (NA if p[1] == "stale" else p[1], p[3] if len(p) > 3 else "")
    return res


def table(args):
    """The catalogue with its results as a Markdown table (docs/testing.md)."""
    res = {}
    for path in args.results:
        res.update(read_results(path))  # later files (re-runs) win
    rows = read_catalogue(args.catalogue)
    print("| id | where | mutation | result | first failing test |")
    print("| --- | --- | --- | --- | --- |")
    for m in rows:
        st, by = res.get(m["id"], ("not run", ""))
        print("| %s | `%s:%d` | %s | %s | %s |" % (m["id"], m["file"][len("models/"):], m["line"], diff_line(m).replace("|", "\\|"),
                                               st, by[len("unit:"):] if by.startswith("unit:") else by))
    summarize([(m, res[m["id"]][0], 0, res[m["id"]][1]) for m in rows if m["id"] in res])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--seed", type=int, default=10)
    g.add_argument("--count", type=int, default=100)
    ls = sub.add_parser("list")
    ls.add_argument("catalogue", nargs="?", default=DEFAULT_CATALOGUE)
    r = sub.add_parser("run")
    r.add_argument("catalogue", nargs="?", default=DEFAULT_CATALOGUE)
    r.add_argument("--only", help="comma-separated mutant ids")
    r.add_argument("--timeout", type=int, default=0, help="suite timeout per mutant, s (default 3x the baseline)")
    r.add_argument("--build-timeout", type=int, default=1800)
    r.add_argument("--jobs", type=int, default=2, help="build jobs")
    r.add_argument("--test-jobs", type=int, default=0, help="ctest jobs (default: --jobs)")
    r.add_argument("--resume", action="store_true", help="skip the mutants the results file has already")
    r.add_argument("--tests", help="run only the ctest entries matching this regex (to confirm that a new test "
                                   "kills a mutant quickly; a survivor of a subset proves nothing)")
    r.add_argument("--results", help="results file (default WORK/results.tsv)")
    t = sub.add_parser("table")
    t.add_argument("catalogue", nargs="?", default=DEFAULT_CATALOGUE)
    t.add_argument("--results", action="append", required=True, help="results file(s) of runs; later ones win")
    r.add_argument("--work", default=os.path.join(ROOT, "build-mutate"),
                   help="scratch directory (default build-mutate/ in the tree, ignored by git)")
    a = ap.parse_args()
    if a.cmd == "generate":
        write_catalogue(generate(a.seed, a.count), sys.stdout, a.seed, a.count)
    elif a.cmd == "table":
        table(a)
    elif a.cmd == "list":
        for m in read_catalogue(a.catalogue):
            print("%s %-5s %s:%d %s" % (m["id"], m["kind"], m["file"], m["line"], diff_line(m)))
    else:
        run(a)


if __name__ == "__main__":
    main()

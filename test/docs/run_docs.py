#!/usr/bin/env python3
"""The docs suite: runs every ```sql block of README.md and docs/*.md against a
real server, so that no SQL the documentation shows is untested.

Each Markdown file gets a fresh database, with the extension already created,
on the server that libpq's environment names (test/docs/run.sh starts one and
runs this script against it); its blocks run in order, each with ON_ERROR_STOP,
so a later block sees the tables an earlier one made. A block that cannot run
here carries, on the line before its fence, `<!-- not run: why; what covers
it -->` and is counted, not run. A block meant to fail carries
`<!-- expect error SQLSTATE -->` and must fail with exactly that SQLSTATE.
Blocks of application code (js, ts, py, rb, php, go, rs, java, prisma, xml,
yaml) are not run here: each must stand, line for line, in a file under test/
or docs/monitoring/, which the suites that run that code read.
Run it through test/docs/run.sh [--show] [FILE.md ...] (as root); by itself:
    PGHOST=... PGPORT=... PGUSER=... run_docs.py --pg-bin DIR [--show] [FILE.md ...]
It prints one line per failing block (file:line, the error) and ends with
"N run, M not run" and "N passed, N failed"; --show also prints what each
block printed, to read the results against the prose.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->")
EXPECT_ERROR = re.compile(r"<!--\s*expect error\s+([0-9A-Z]{5})\s*-->")


class Block:
    """One ```sql block: where it starts, its text, and what the comment before it asks."""

    def __init__(self, path, line, sql, not_run, expect):
        self.path, self.line, self.sql, self.not_run, self.expect = path, line, sql, not_run, expect


def blocks_of(path):
    """The ```sql blocks of a Markdown file, in order, with the marker comment before each (if any)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, i = [], 0
    while i < len(lines):
        fence = lines[i].strip()
        if fence.startswith("```") and fence[3:].strip() == "sql":
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            sql = "\n".join(l[len(indent):] if l.startswith(indent) else l for l in lines[i + 1 : j])
            not_run = NOT_RUN.search(before)
            expect = EXPECT_ERROR.search(before)
            found.append(Block(path, i + 1, sql, not_run and not_run.group(1), expect and expect.group(1)))
            i = j
        i += 1
    return found


# Code in other languages is checked, not run: each such block must stand, line for line (indentation
# and blank lines aside), in one file of the suites that run it.
RECIPE_LANGUAGES = {"js", "javascript", "ts", "typescript", "py", "python", "rb", "ruby", "php", "go", "rs", "rust",
                    "java", "prisma", "xml", "yaml"}
RECIPE_SOURCES = [os.path.join(ROOT, "test"), os.path.join(ROOT, "docs", "monitoring")]


def recipe_blocks(path):
    """The fenced blocks in RECIPE_LANGUAGES of a Markdown file: (line, stripped non-blank lines)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, i = [], 0
    while i < len(lines):
        fence = lines[i].strip()
        if fence.startswith("```") and fence[3:].strip() in RECIPE_LANGUAGES:
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            found.append((i + 1, [l.strip() for l in lines[i + 1 : j] if l.strip()]))
            i = j
        i += 1
    return found


# What the suites install or build under test/: not the tests' own code.
NOT_SOURCES = {"node_modules", "generated", "target", "__pycache__"}


def source_lines():
    """Every file under RECIPE_SOURCES (NOT_SOURCES aside) as its stripped non-blank lines."""
    sources = {}
    for top in RECIPE_SOURCES:
        for folder, dirs, names in os.walk(top):
            dirs[:] = [d for d in dirs if d not in NOT_SOURCES]
            for name in names:
                try:
                    text = open(os.path.join(folder, name), encoding="utf-8").read()
                except (UnicodeDecodeError, OSError):
                    continue
                sources[os.path.join(folder, name)] = [l.strip() for l in text.split("\n") if l.strip()]
    return sources


def stands_in(block, sources):
    """Whether the block's lines appear, consecutively, in one of the sources."""
    n = len(block)
    return any(lines[k : k + n] == block for lines in sources.values() for k in range(len(lines) - n + 1))


def psql(pg_bin, db, sql):
    """Runs SQL through psql on the server libpq's environment names (PGHOST, PGPORT); returns (exit code, output)."""
    cmd = [os.path.join(pg_bin, "psql"), "-X", "-q", "-d", db, "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose"]
    run = subprocess.run(cmd, input=sql, text=True, capture_output=True)
    return run.returncode, run.stdout + run.stderr


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pg-bin", required=True)
    parser.add_argument("--show", action="store_true", help="print each block's output")
    parser.add_argument("files", nargs="*")
    opts = parser.parse_args()
    files = opts.files or [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))

    passed = failed = skipped = 0
    for n, path in enumerate(files):
        rel = os.path.relpath(path, ROOT)
        db = f"docs_{n}"
        code, out = psql(opts.pg_bin, "postgres", f"DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db};")
        if code == 0:
            code, out = psql(opts.pg_bin, db, "CREATE EXTENSION snowflake;")
        if code != 0:
            print(f"FAILED {rel}: could not make its database: {out.strip()}")
            failed += 1
            continue
        for block in blocks_of(path):
            if block.not_run:
                skipped += 1
                continue
            # The extension exists already in each page's database.
            sql = re.sub(r"(?i)CREATE EXTENSION snowflake\b", "CREATE EXTENSION IF NOT EXISTS snowflake", block.sql)
            code, out = psql(opts.pg_bin, db, "SET client_min_messages = warning;\n" + sql)
            if block.expect:
                ok = code != 0 and re.search(rf"ERROR:\s+{block.expect}:", out) is not None
                why = f"expected SQLSTATE {block.expect}, got: {out.strip()[-300:] or 'success'}"
            else:
                ok = code == 0
                why = out.strip()[-400:]
            if opts.show:
                print(f"--- {rel}:{block.line}\n{out.rstrip()}")
            if ok:
                passed += 1
            else:
                failed += 1
                print(f"FAILED {rel}:{block.line}: {why}")
    sources = source_lines()
    for path in files:
        for line, block in recipe_blocks(path):
            if stands_in(block, sources):
                passed += 1
            else:
                failed += 1
                print(f"FAILED {os.path.relpath(path, ROOT)}:{line}: this code stands in no test's source")
    print(f"docs: {passed + failed} run, {skipped} not run")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())

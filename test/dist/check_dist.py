#!/usr/bin/python3
"""Checks a `make dist` zip for PGXN (scripts/test.sh, suite dist): the name and
the prefix carry the control file's version, the release-only files are left
out, and META.json validates against the PGXN Meta Spec 1.0.0 (the JSON Schema
next to this file, with Debian's python3-jsonschema) and names files that are
in the zip with the zip's version. It first shows that the check rejects
broken META.json files, so a pass means something.

Usage: check_dist.py ZIP VERSION
"""
import copy
import json
import os
import re
import sys
import zipfile

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
# Paths (relative to the prefix) that .gitattributes keeps out of the zip.
LEFT_OUT = (".ci/", "debian/", ".gitattributes", "test/package.sh", "test/package_apt.sh", "test/dist/")
# Paths a PGXN user needs to build, install and test.
NEEDED = ("Makefile", "snowflake.control", "META.json", "README.md", "CHANGELOG.md", "LICENSE", "CONTRIBUTING.md",
          "snowflake--0.1.0.sql", "src/sql/generator.sql", "test/regress/main.schedule")


def meta_problems(meta, files, version):
    """Every way meta breaks the spec or disagrees with the zip's files and version; empty if none."""
    validator = jsonschema.Draft7Validator(SCHEMA)
    problems = ["%s: %s" % ("/".join(str(p) for p in e.absolute_path) or "(top)", e.message)
                for e in sorted(validator.iter_errors(meta), key=str)]
    if problems:
        return problems
    if meta["version"] != version:
        problems.append("version %s, control file says %s" % (meta["version"], version))
    for name, ext in meta["provides"].items():
        if ext["version"] != version:
            problems.append("provides/%s/version %s, control file says %s" % (name, ext["version"], version))
        for key in ("file", "docfile"):
            if key in ext and ext[key] not in files:
                problems.append("provides/%s/%s: %s is not in the zip" % (name, key, ext[key]))
    return problems


def report(failures):
    """Prints the failures; the exit status."""
    for failure in failures:
        print("FAIL: " + failure)
    return 1 if failures else 0


def broken_variants(meta):
    """Copies of a valid meta, each broken in one way the check must catch."""
    def variant(change):
        broken = copy.deepcopy(meta)
        change(broken)
        return broken
    ext = next(iter(meta["provides"]))
    return {
        "no license": variant(lambda m: m.pop("license")),
        "unknown license string": variant(lambda m: m.update(license="gpl")),
        "two-part version": variant(lambda m: m.update(version="0.2")),
        "version with a leading zero": variant(lambda m: m.update(version="0.02.0")),
        "one-character name": variant(lambda m: m.update(name="s")),
        "name with a space": variant(lambda m: m.update(name="snow flake")),
        "empty abstract": variant(lambda m: m.update(abstract="")),
        "no maintainer": variant(lambda m: m.update(maintainer=[])),
        "meta-spec 2.0.0": variant(lambda m: m["meta-spec"].update(version="2.0.0")),
        "unknown top-level key": variant(lambda m: m.update(homepage="https://example.org/")),
        "custom key without x_": variant(lambda m: m["provides"][ext].update(notes="n")),
        "provides without file": variant(lambda m: m["provides"][ext].pop("file")),
        "provides file not in the zip": variant(lambda m: m["provides"][ext].update(file="sql/missing.sql")),
        "absolute provides file": variant(lambda m: m["provides"][ext].update(file="/snowflake--0.1.0.sql")),
        "provides version differs": variant(lambda m: m["provides"][ext].update(version="0.0.1")),
        "bad prereq range": variant(lambda m: m.update(prereqs={"runtime": {"requires": {"PostgreSQL": "~15"}}})),
        "unknown prereq phase": variant(lambda m: m.update(prereqs={"install": {"requires": {"PostgreSQL": 0}}})),
        "bad release_status": variant(lambda m: m.update(release_status="beta")),
        "tag with a slash": variant(lambda m: m.update(tags=["a/b"])),
    }


def main(zip_path, version):
    failures = []
    prefix = "snowflake-%s/" % version
    if os.path.basename(zip_path) != "snowflake-%s.zip" % version:
        failures.append("zip is named %s, not snowflake-%s.zip" % (os.path.basename(zip_path), version))
    with zipfile.ZipFile(zip_path) as z:
        names = z.namelist()
        outside = [n for n in names if not n.startswith(prefix)]
        if outside:
            failures.append("entries outside %s: %s" % (prefix, outside[:5]))
        files = {n[len(prefix):] for n in names if n.startswith(prefix) and not n.endswith("/")}
        for path in sorted(files):
            if path.startswith(LEFT_OUT):
                failures.append("release-only file in the zip: " + path)
        # Every page of docs/ in the checkout (README links them all) ships too.
        docs = sorted("docs/" + f for f in os.listdir(os.path.join(HERE, "..", "..", "docs")) if f.endswith(".md"))
        for path in NEEDED + tuple(docs):
            if path not in files:
                failures.append("missing from the zip: " + path)
        if "snowflake.control" not in files or "META.json" not in files:
            return report(failures)
        control = z.read(prefix + "snowflake.control").decode()
        meta = json.loads(z.read(prefix + "META.json"))
    match = re.search(r"^default_version = '([^']*)'", control, re.M)
    if not match or match.group(1) != version:
        failures.append("the zip's snowflake.control has default_version %s, not %s"
                        % (match.group(1) if match else "(none)", version))
    print("%s: %d files under %s" % (os.path.basename(zip_path), len(files), prefix))

    # The check must be able to fail: every broken variant is rejected.
    accepted = [name for name, broken in broken_variants(meta).items() if not meta_problems(broken, files, version)]
    if accepted:
        failures.append("the META.json check accepted broken variants: %s" % accepted)
    else:
        print("the META.json check rejects all %d broken variants" % len(broken_variants(meta)))

    problems = meta_problems(meta, files, version)
    failures += ["META.json: " + p for p in problems]
    if not problems:
        print("META.json validates against PGXN Meta Spec %s; version %s" % (meta["meta-spec"]["version"], version))
    return report(failures)


with open(os.path.join(HERE, "pgxn-meta-1.0.0.schema.json")) as f:
    SCHEMA = json.load(f)
jsonschema.Draft7Validator.check_schema(SCHEMA)

if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))

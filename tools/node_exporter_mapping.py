#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads docs/node_exporter_mapping.tsv (node_exporter family -> Vigil family).

  --markdown        print the "Porting from node_exporter" table of docs/metrics.md
  --write-doc       replace that table in docs/metrics.md with the one from the mapping file
  --count FILE      FILE is a node_exporter /metrics scrape: print how many of its families
                    have a Vigil equivalent, how many are listed without one, and how many are
                    not listed ("-" reads stdin)
  --missing FILE    like --count, but list the families without a Vigil equivalent
"""
import argparse
import os
import sys

MAPPING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs",
                       "node_exporter_mapping.tsv")


def load(path=MAPPING):
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 5:
                sys.exit(f"{path}:{n}: want 5 tab-separated columns, got {len(cols)}")
            rows.append(cols)
    return rows


def markdown(rows):
    out = ["| node_exporter collector | node_exporter family | Vigil family | Vigil collector | conversion |",
           "|---|---|---|---|---|"]
    for ne_coll, ne_fam, vigil, vigil_coll, conv in rows:
        v = "(none)" if vigil == "-" else f"`{vigil}`"
        c = "" if vigil_coll == "-" else f"`{vigil_coll}`"
        out.append(f"| {ne_coll} | `{ne_fam}` | {v} | {c} | {conv} |")
    return "\n".join(out)


def write_doc(rows):
    path = os.path.join(os.path.dirname(MAPPING), "metrics.md")
    doc = open(path, encoding="utf-8").read()
    start = doc.index("## Porting from node_exporter")
    table = doc.index("| node_exporter collector |", start)
    end = doc.find("\n## ", table)
    end = len(doc) if end < 0 else end + 1
    tail = doc[end:]
    doc = doc[:table] + markdown(rows) + "\n" + ("\n" + tail if tail else "")
    with open(path, "w", encoding="utf-8") as f:
        f.write(doc)


def scrape_families(text):
    fams = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            parts = line.split()
            if len(parts) >= 3:
                fams.add(parts[2])
    return fams


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--markdown", action="store_true")
    g.add_argument("--write-doc", action="store_true")
    g.add_argument("--count", metavar="FILE")
    g.add_argument("--missing", metavar="FILE")
    a = p.parse_args()
    rows = load()
    if a.markdown:
        print(markdown(rows))
        return
    if a.write_doc:
        write_doc(rows)
        return
    path = a.count or a.missing
    text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    fams = {f for f in scrape_families(text) if f.startswith("node_")}
    fams -= {f for f in fams if f.startswith("node_scrape_") or f.startswith("node_exporter_")}
    mapped = {r[1] for r in rows if r[2] != "-"}
    listed = {r[1] for r in rows}
    have = sorted(fams & mapped)
    none = sorted((fams & listed) - mapped)
    unlisted = sorted(fams - listed)
    if a.count:
        print(f"{len(have)} {len(fams)} {len(none)} {len(unlisted)}")
    else:
        for f in none + unlisted:
            print(f)


if __name__ == "__main__":
    main()

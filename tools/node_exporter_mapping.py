#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads docs/node_exporter_mapping.tsv (node_exporter family -> Vigil family).

  --markdown        print the "Porting from node_exporter" table of docs/metrics.md
  --write-doc       replace that table in docs/metrics.md with the one from the mapping file
  --count FILE      FILE is a node_exporter /metrics scrape: print how many of its families
                    have a Vigil equivalent, how many are listed without one, and how many are
                    not listed ("-" reads stdin)
  --missing FILE    like --count, but list the families without a Vigil equivalent
  --compare NE VIGIL  NE and VIGIL are scrapes of node_exporter and vigild taken together: for
                    each mapped family, convert node_exporter's value (summed over its series)
                    with the conversion column and compare it with Vigil's (summed over the
                    series the selector picks); print "<agree> <compared>" and each disagreement
                    beyond 10 % + 5 (values move between the two scrapes)
"""
import argparse
import os
import re
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


def scrape_samples(text):
    samples = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)', line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        try:
            samples.setdefault(m.group(1), []).append((labels, float(m.group(3))))
        except ValueError:
            pass
    return samples


def compare(rows, ne_text, vigil_text, page_size):
    """Yields (node_exporter family, converted node_exporter value, Vigil value) per mapped
    family both scrapes have and whose conversion this function knows."""
    ne, vg = scrape_samples(ne_text), scrape_samples(vigil_text)
    for _, ne_fam, vigil, _, conv in rows:
        if (vigil == "-" or ne_fam not in ne or "per node" in conv or "huge page size" in conv
                or "series differ" in conv):
            continue
        fam = vigil.split("{")[0]
        want = dict(re.findall(r'(\w+)="([^"]*)"', vigil[len(fam):]))
        if fam == "vigil_host_cpu_seconds_total":
            want_not_all = True
        else:
            want_not_all = False
        values = [v for labels, v in vg.get(fam, [])
                  if all(labels.get(k) == x for k, x in want.items())
                  and not (want_not_all and labels.get("cpu") == "all")]
        if not values:
            continue
        # Vigil's network collectors leave the loopback device out; node_exporter counts it.
        ne_values = [v for labels, v in ne[ne_fam]
                     if not (ne_fam.startswith("node_network_") and labels.get("device") == "lo")]
        if "Forwarding" in ne_fam:
            ne_sum = sum(1 if v == 1 else 0 for v in ne_values)
        elif "pps_shift" in ne_fam:
            ne_sum = sum(2 ** v for v in ne_values)
        else:
            factor = 1.0
            if "KiB x 1024" in conv:
                factor = 1024
            elif "pages x page size" in conv:
                factor = page_size
            elif "sectors x 512" in conv:
                factor = 512
            elif "ns / 1e9" in conv:
                factor = 1e-9
            ne_sum = sum(ne_values) * factor
        yield ne_fam, ne_sum, sum(values)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--markdown", action="store_true")
    g.add_argument("--write-doc", action="store_true")
    g.add_argument("--count", metavar="FILE")
    g.add_argument("--missing", metavar="FILE")
    g.add_argument("--compare", nargs=2, metavar=("NE", "VIGIL"))
    a = p.parse_args()
    rows = load()
    if a.markdown:
        print(markdown(rows))
        return
    if a.write_doc:
        write_doc(rows)
        return
    if a.compare:
        texts = [open(p, encoding="utf-8").read() for p in a.compare]
        agree = compared = 0
        for fam, ne_value, vigil_value in compare(rows, texts[0], texts[1], os.sysconf("SC_PAGESIZE")):
            compared += 1
            if abs(ne_value - vigil_value) <= 0.1 * max(abs(ne_value), abs(vigil_value)) + 5:
                agree += 1
            else:
                print(f"  {fam}: node_exporter {ne_value:.6g}, Vigil {vigil_value:.6g}",
                      file=sys.stderr)
        print(f"{agree} {compared}")
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

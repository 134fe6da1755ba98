#!/usr/bin/env python3
# Include-dependency rule: a module may include only the modules listed for it below
# (DESIGN.md "Layout"). Every target has src/ on its include path, so the linker alone cannot
# catch a wrong arrow; this script can. Exit status 1 lists each forbidden edge.
import os
import re
import sys

ALLOWED = {
    "base": set(),
    "metrics": {"base"},
    "hwspec": {"base"},
    "attribution": {"base"},
    "collectors": {"base", "metrics", "attribution", "gpu", "hwspec", "snoop", "profile"},
    "gpu": {"base", "metrics", "hwspec"},
    "sinks": {"base", "metrics"},
    "rpc": {"base"},
    # The guarded HTTP server layer (one deadline per request, caps and the token checked before
    # any body) that vigild's API and vigil-fleet share: below both, above base alone.
    "httpd": {"base"},
    "ipc": {"base", "metrics", "attribution", "rpc"},
    "client": {"base", "ipc"},
    "trace": {"base", "hwspec"},
    # perf_event and ELF machinery: sampling, unwinding, symbolisation, profile outputs.
    "profile": {"base"},
    # eBPF CUDA tracing; its stacks are symbolised by profile.
    "snoop": {"base", "profile"},
    "daemon": {"base", "metrics", "hwspec", "attribution", "collectors", "gpu", "sinks", "rpc",
               "ipc", "httpd", "profile"},
    # profile: the continuous CPU profiles daemons upload are parsed, merged and rendered
    # (folded, pprof, flame graph) with the same code `vigil profile` writes them with.
    "fleet": {"base", "metrics", "rpc", "trace", "hwspec", "httpd", "profile"},
    # `vigil snoop` and `vigil profile` load their probes in the CLI process when run locally.
    "cli": {"base", "rpc", "trace", "hwspec", "metrics", "snoop", "profile"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    bad = []
    for module in sorted(os.listdir(root)):
        path = os.path.join(root, module)
        if not os.path.isdir(path):
            continue
        allowed = ALLOWED.get(module)
        if allowed is None:
            bad.append(f"src/{module}: module not listed in tools/check_deps.py")
            continue
        for dirpath, _, files in os.walk(path):
            for name in files:
                if not name.endswith((".h", ".cc", ".c")):
                    continue
                file = os.path.join(dirpath, name)
                is_test = name.endswith(("_test.cc", "_integrationtest.cc"))
                with open(file, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        if target == module or target in allowed:
                            continue
                        if is_test and target == "tests":
                            continue
                        rel = os.path.relpath(file, os.path.join(root, ".."))
                        bad.append(f"{rel}:{lineno}: {module} may not include {target}/")
    for line in bad:
        print(line, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

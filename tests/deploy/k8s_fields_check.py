#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Unknown fields in Kubernetes objects, which the API server drops with only a warning (a
misspelt "readOnly" leaves a volume writable). The Kubernetes schemas leave objects open, so a
schema validator passes them: here every key is looked up in the model classes of Debian's
python3-kubernetes (generated from the Kubernetes OpenAPI spec), recursively.

Reads a JSON list of objects on stdin; prints one line per unknown field ("DOC PATH: unknown
field NAME") and exits 1 if there was any. Exit 77 without python3-kubernetes."""
import json
import re
import sys

try:
    from kubernetes import client
except ImportError:
    print("SKIPPED: python3-kubernetes is not installed")
    sys.exit(77)

PRIMITIVES = {"str", "int", "float", "bool", "object", "date", "datetime"}


def model_for(api_version, kind):
    # The client names models by version and kind only: apps/v1 DaemonSet is V1DaemonSet.
    version = api_version.rpartition("/")[2]
    return getattr(client, version[:1].upper() + version[1:] + kind, None)


def check(value, type_name, path, errors):
    if value is None or type_name in PRIMITIVES:
        return
    m = re.fullmatch(r"list\[(.+)\]", type_name)
    if m:
        if isinstance(value, list):
            for i, item in enumerate(value):
                check(item, m.group(1), f"{path}[{i}]", errors)
        return
    m = re.fullmatch(r"dict\(str, (.+)\)", type_name)
    if m:
        if isinstance(value, dict):
            for k, item in value.items():
                check(item, m.group(1), f"{path}.{k}", errors)
        return
    cls = getattr(client, type_name, None)
    if cls is None or not isinstance(value, dict):
        return  # Types and scalars are the schema validator's part.
    by_json = {j: p for p, j in cls.attribute_map.items()}
    for key, item in value.items():
        attr = by_json.get(key)
        if attr is None:
            errors.append(f"{path}: unknown field {key!r} (not in {type_name})")
            continue
        check(item, cls.openapi_types[attr], f"{path}.{key}", errors)


def main():
    docs = json.load(sys.stdin)
    errors = []
    for doc in docs:
        where = f"{doc.get('_source', '?')} {doc.get('kind', '?')}/{doc.get('metadata', {}).get('name', '?')}"
        body = {k: v for k, v in doc.items() if k != "_source"}
        cls = model_for(body.get("apiVersion", ""), body.get("kind", ""))
        if cls is None:
            errors.append(f"{where}: no model for {body.get('apiVersion')} {body.get('kind')}")
            continue
        check(body, cls.__name__, where, errors)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

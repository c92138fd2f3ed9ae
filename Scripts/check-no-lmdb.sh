#!/usr/bin/env bash
# Issue 37: Trellis links no LMDB. Fails if any product of the default build, or any non-test
# target, depends on the CLMDB system-library target (read from `swift package describe`), or if
# the built binaries given as arguments load liblmdb (ldd).
#   bash Scripts/check-no-lmdb.sh [BINARY...]
set -euo pipefail
cd "$(dirname "$0")/.."
swift package describe --type json | python3 -c '
import json, sys
package = json.load(sys.stdin)
targets = {t["name"]: t for t in package["targets"]}
def closure(name, seen):
    if name in seen or name not in targets:
        return seen
    seen.add(name)
    for dependency in targets[name].get("target_dependencies", []):
        closure(dependency, seen)
    return seen
bad = []
for product in package["products"]:
    reached = set()
    for target in product["targets"]:
        closure(target, reached)
    if "CLMDB" in reached:
        bad.append("product " + product["name"])
for name, target in targets.items():
    if target["type"] != "test" and name != "CLMDB" and "CLMDB" in closure(name, set()):
        bad.append("target " + name)
if bad:
    sys.exit("check-no-lmdb: depends on CLMDB (LMDB): " + ", ".join(bad))
print("check-no-lmdb: no product and no non-test target depends on CLMDB (%d products, %d targets)"
      % (len(package["products"]), len(targets)))
'
for binary in "$@"; do
    if ldd "$binary" | grep -i lmdb; then
        echo "check-no-lmdb: $binary loads LMDB" >&2
        exit 1
    fi
    echo "check-no-lmdb: $binary loads no LMDB"
done

#!/usr/bin/env bash
# libFuzzer over TrellisStorage's file format (issue 35; docs/RELIABILITY.md, "TrellisStorage").
# Built here with swiftc, optimised, with the fuzzer sanitizer (coverage; Swift's own bounds and
# overflow checks stay on) and, with SANITIZE=fuzzer,address, AddressSanitizer too (about 3x
# slower; the engine reads the file through a memory map, which ASan does not watch, so an
# out-of-file read shows as SIGBUS/SIGSEGV either way). SwiftPM, `swift build` and CI never build it. Starts from seed files it writes (Fuzz/Corpus/storage, made
# on the first run), grows its corpus in Fuzz/Work/storage and puts crashing inputs in
# Fuzz/Findings/ (both out of git). Each finding becomes a regression input in
# Tests/TrellisStorageTests/Resources/FuzzFindings/ that StorageFuzzRegressionTests replays.
#   bash Scripts/fuzz-storage.sh [RUNS] [extra libFuzzer flags...]   (RUNS default 100000; -1 = forever)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-100000}"
shift || true
out=.build-fuzz-storage
mkdir -p "$out" Fuzz/Findings Fuzz/Work/storage
sanitize="${SANITIZE:-fuzzer}"
out="$out-${sanitize//,/-}"
mkdir -p "$out"
flags=(-O -sanitize="$sanitize" -parse-as-library)
sources=(Sources/TrellisStorage/*.swift Fuzz/Storage/*.swift Sources/TrellisStorageProcessHelper/StorageFuzzInput.swift)
if [ ! -x "$out/fuzz-storage" ] || [ -n "$(find "${sources[@]}" -newer "$out/fuzz-storage")" ]; then
    # TrellisStorage imports swift-crypto (encrypted files): SwiftPM builds it (release, without
    # the fuzzer's instrumentation: the fuzzer explores the file format, not AES), and the
    # fuzzer links its objects. These are the targets of swift-crypto's Crypto product.
    rm -f "$out/fuzz-storage"
    swift build -c release --target TrellisStorage 2>&1 | grep -v -e "^warning: " -e "Compiling" -e "^\[" || true
    deps="$(swift build -c release --show-bin-path)"
    dep_objects=()
    for target in Crypto CryptoBoringWrapper CCryptoBoringSSL CCryptoBoringSSLShims CXKCP CXKCPShims; do
        if [ -d "$deps/$target.build" ]; then
            while IFS= read -r object; do dep_objects+=("$object"); done < <(find "$deps/$target.build" -name '*.o')
        fi
    done
    if [ ! -f "$out/TrellisStorage.o" ] || [ -n "$(find Sources/TrellisStorage -newer "$out/TrellisStorage.o")" ]; then
        rm -f "$out/TrellisStorage.o"
        swiftc "${flags[@]}" -wmo -module-name TrellisStorage -I "$deps/Modules" -emit-module \
            -emit-module-path "$out/TrellisStorage.swiftmodule" -c Sources/TrellisStorage/*.swift \
            -o "$out/TrellisStorage.o" 2>&1 | grep -v "^warning: " || true
    fi
    swiftc "${flags[@]}" -I "$out" -I "$deps/Modules" -module-name FuzzStorage Fuzz/Storage/*.swift \
        Sources/TrellisStorageProcessHelper/StorageFuzzInput.swift "$out/TrellisStorage.o" "${dep_objects[@]}" \
        -o "$out/fuzz-storage" 2>&1 | grep -v -e "ld.gold: warning" -e "^warning: " || true
    if [ ! -x "$out/fuzz-storage" ]; then
        echo "fuzz-storage: the fuzzer did not build (see the errors above)" >&2
        exit 1
    fi
fi
if [ ! -d Fuzz/Corpus/storage ]; then
    TRELLIS_FUZZ_STORAGE_MAKE_SEEDS="$PWD/Fuzz/Corpus/storage" "$out/fuzz-storage"
fi
cp -n Fuzz/Corpus/storage/* Fuzz/Work/storage/
SWIFT_BACKTRACE=enable=no "$out/fuzz-storage" Fuzz/Work/storage -runs="$runs" -artifact_prefix=Fuzz/Findings/FuzzStorage- \
    -print_final_stats=1 -max_len=131072 -timeout=10 -malloc_limit_mb=512 -rss_limit_mb=2048 "$@"

#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/) with the fuzzer and address sanitizers and runs each for
# SECONDS (default 180), starting from the seeds in Fuzz/Corpus/<target> (the grown corpus
# lives in Fuzz/Work/, out of git). Crashing inputs land in Fuzz/Findings/ (out of git); each
# one becomes a regression test (Tests/TrellisTests/FuzzRegressionTests.swift).
#   bash Scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/install-deps.sh
seconds="${1:-180}"
cd Fuzz
swift build -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
bin="$(swift build -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --show-bin-path)"
mkdir -p Findings Corpus/query Corpus/file Work/query Work/file
if [ ! -f Corpus/file/seed.realm ]; then
    TRELLIS_FUZZ_MAKE_SEED="$PWD/Corpus/file/seed.realm" "$bin/FuzzFile" || true
    rm -f Corpus/file/seed.realm-lock
fi
for target in FuzzQuery FuzzFile; do
    name="$(echo "${target#Fuzz}" | tr '[:upper:]' '[:lower:]')"
    cp -n Corpus/"$name"/* Work/"$name"/
    echo "== $target for ${seconds}s"
    SWIFT_BACKTRACE=enable=no "$bin/$target" Work/"$name" -max_total_time="$seconds" -artifact_prefix=Findings/"$target"- \
        -print_final_stats=1 -max_len=65536 2>&1 | grep -E "^#|stat::|ERROR|SUMMARY|Done|crash|artifact" | tail -12
done

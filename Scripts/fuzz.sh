#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/) optimised (-c release: a debug build runs about 10x
# slower) with the fuzzer and address sanitizers, and runs each for SECONDS (default 180),
# starting from the seeds in Fuzz/Corpus/<name> (the grown corpus lives in Fuzz/Work/, out of
# git). Crashing inputs land in Fuzz/Findings/ (out of git); each one becomes a regression test
# (Tests/TrellisTests/FuzzRegressionTests.swift). Prints each target's execution count.
#   bash Scripts/fuzz.sh [SECONDS] [TARGET...]     (targets: FuzzQuery FuzzFile FuzzExtendedJSON FuzzSchema)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-180}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(FuzzQuery FuzzFile FuzzExtendedJSON FuzzSchema)
cd Fuzz
flags=(-c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library)
swift build "${flags[@]}"
bin="$(swift build "${flags[@]}" --show-bin-path)"
mkdir -p Findings
if [ ! -f Corpus/file/seed.realm ]; then
    TRELLIS_FUZZ_MAKE_SEED="$PWD/Corpus/file/seed.realm" "$bin/FuzzFile" || true
    rm -f Corpus/file/seed.realm-lock
fi
for target in "${targets[@]}"; do
    name="$(echo "${target#Fuzz}" | tr '[:upper:]' '[:lower:]')"
    [ "$name" = extendedjson ] && name=ejson
    mkdir -p Work/"$name"
    cp -n Corpus/"$name"/* Work/"$name"/
    echo "== $target for ${seconds}s"
    SWIFT_BACKTRACE=enable=no "$bin/$target" Work/"$name" -max_total_time="$seconds" -artifact_prefix=Findings/"$target"- \
        -print_final_stats=1 -max_len=65536 -rss_limit_mb=4096 2>&1 \
        | grep -E "^#|stat::|ERROR|SUMMARY|Done|crash|artifact" | tail -12
done

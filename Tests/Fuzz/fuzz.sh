#!/bin/sh
# Builds the libFuzzer targets (Tests/Fuzz/<name>) with AddressSanitizer and runs each for a bounded
# time: `make fuzz` (FUZZ_SECONDS per target, default 60) and `make fuzz-long` (1,200 s each, then the
# corpus minimised back into Tests/Fuzz/<name>/corpus). Inputs up to 8 KB. Inputs that find new
# coverage go to .build-fuzz/corpus/<name>; with FUZZ_MINIMISE=1 the committed corpus and those are
# merged (libFuzzer -merge=1: the smallest set keeping every feature) into Tests/Fuzz/<name>/corpus.
# FUZZ_JOBS targets run at once (default 1; each target is one process on one core). A failing input
# is written to .build-fuzz/crashes/ and fails the run. See docs/FUZZING.md.
set -eu
SWIFT=${SWIFT:-swift}
export IMGBAKE_FUZZ=1  # Package.swift declares the fuzz targets only then
SECONDS_EACH=${FUZZ_SECONDS:-60}
JOBS=${FUZZ_JOBS:-1}
MINIMISE=${FUZZ_MINIMISE:-0}
TARGETS=${FUZZ_TARGETS:-"srcset markdown-destination toml html-rewrite markdown-rewrite remote-pack"}
OUT=.build-fuzz

mkdir -p "$OUT/crashes"
for name in $TARGETS; do
    # A separate scratch path, so the fuzz build never disturbs the normal one. -DIMGBAKE_FUZZING makes
    # the program hand control to libFuzzer (Tests/Fuzz/Driver). Optimised (bounds checks and
    # preconditions stay), as it runs about 9 times as many inputs a second as a debug build; -g for
    # the stack of a crash.
    if ! "$SWIFT" build -c release --scratch-path "$OUT" -Xswiftc -sanitize=fuzzer,address -Xswiftc -DIMGBAKE_FUZZING \
            -Xswiftc -g --product "fuzz-$name" > "$OUT/build.log" 2>&1; then
        # gold warns once per ASan helper symbol; the error is what matters.
        grep -v "Cannot export local symbol" "$OUT/build.log" >&2
        exit 1
    fi
done

# One target: fuzz for SECONDS_EACH, then (FUZZ_MINIMISE=1) minimise into the committed corpus.
run() {
    name=$1
    rm -rf "$OUT/corpus/$name.min"
    mkdir -p "$OUT/corpus/$name" "$OUT/corpus/$name.min"
    # SWIFT_BACKTRACE: Swift's crash backtracer reads memory that ASan then reports; libFuzzer's own
    # report is the one wanted. -timeout: an input that takes 10 s is a finding too.
    if ! SWIFT_BACKTRACE=enable=no "$OUT/release/fuzz-$name" -max_total_time="$SECONDS_EACH" -timeout=10 \
            -max_len=8192 -dict="Tests/Fuzz/$name/tokens.dict" -artifact_prefix="$OUT/crashes/$name-" -print_final_stats=1 \
            "$OUT/corpus/$name" "Tests/Fuzz/$name/corpus" > "$OUT/$name.log" 2>&1; then
        tail -n 40 "$OUT/$name.log" >&2
        echo "fuzz-$name failed: the input is in $OUT/crashes/ (replay it: swift run fuzz-$name <file>); log: $OUT/$name.log" >&2
        return 1
    fi
    if [ "$MINIMISE" = 1 ]; then
        SWIFT_BACKTRACE=enable=no "$OUT/release/fuzz-$name" -merge=1 -max_len=8192 -timeout=10 \
            "$OUT/corpus/$name.min" "Tests/Fuzz/$name/corpus" "$OUT/corpus/$name" > "$OUT/$name.merge.log" 2>&1
        rm -rf "Tests/Fuzz/$name/corpus"
        mv "$OUT/corpus/$name.min" "Tests/Fuzz/$name/corpus"
    fi
}

# Executions, speed, coverage (libFuzzer's `cov`: edges reached; `ft`: features), corpus size.
summary() {
    name=$1
    log="$OUT/$name.log"
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    time=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
    corpus=$(ls "Tests/Fuzz/$name/corpus" | wc -l)
    size=$(du -sk "Tests/Fuzz/$name/corpus" | cut -f1)
    printf '%-22s %12s %8s %8s %6s %7s %9s\n' "$name" "$runs" "$speed" "$time" "$cov" "$ft" "$corpus/${size}K"
}

failed=0
set -- $TARGETS
while [ $# -gt 0 ]; do
    batch=""
    i=0
    while [ $# -gt 0 ] && [ $i -lt "$JOBS" ]; do
        run "$1" & batch="$batch $!"
        shift
        i=$((i + 1))
    done
    for pid in $batch; do wait "$pid" || failed=1; done
done

printf '%-22s %12s %8s %8s %6s %7s %9s\n' target executions "exec/s" seconds cov ft corpus
for name in $TARGETS; do summary "$name"; done
exit $failed

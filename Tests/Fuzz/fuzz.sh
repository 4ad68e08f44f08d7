#!/bin/sh
# Builds the libFuzzer targets (Tests/Fuzz/<name>) with AddressSanitizer and runs each for a bounded
# time: `make fuzz`, FUZZ_SECONDS per target (default 60), inputs up to 8 KB. Inputs that find new
# coverage go to .build-fuzz/corpus/<name> (not committed; Tests/Fuzz/<name>/seeds are the committed
# ones). A failing input is written to .build-fuzz/crashes/ and stops the run. See docs/FUZZING.md.
set -eu
SWIFT=${SWIFT:-swift}
export IMGBAKE_FUZZ=1  # Package.swift declares the fuzz targets only then
SECONDS_EACH=${FUZZ_SECONDS:-60}
TARGETS=${FUZZ_TARGETS:-"srcset markdown-destination toml html-rewrite markdown-rewrite"}
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

printf '%-22s %12s %8s %s\n' target executions seconds corpus
for name in $TARGETS; do
    mkdir -p "$OUT/corpus/$name"
    # SWIFT_BACKTRACE: Swift's crash backtracer reads memory that ASan then reports; libFuzzer's own
    # report is the one wanted. -timeout: an input that takes 10 s is a finding too.
    if ! SWIFT_BACKTRACE=enable=no "$OUT/release/fuzz-$name" -max_total_time="$SECONDS_EACH" -timeout=10 \
            -max_len=8192 -dict="Tests/Fuzz/$name/tokens.dict" -artifact_prefix="$OUT/crashes/$name-" -print_final_stats=1 \
            "$OUT/corpus/$name" "Tests/Fuzz/$name/seeds" > "$OUT/$name.log" 2>&1; then
        tail -n 40 "$OUT/$name.log" >&2
        echo "fuzz-$name failed: the input is in $OUT/crashes/ (replay it: swift run fuzz-$name <file>); log: $OUT/$name.log" >&2
        exit 1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/$name.log")
    time=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$OUT/$name.log")
    printf '%-22s %12s %8s %s\n' "$name" "$runs" "$time" "$(ls "$OUT/corpus/$name" | wc -l) inputs"
done

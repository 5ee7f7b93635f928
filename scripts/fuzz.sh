#!/usr/bin/env bash
# Builds the libFuzzer targets of Fuzz/ (ParsleyCore only, with -sanitize=fuzzer,address) and runs each for a
# bounded time on a copy of its seed corpus (Fuzz/Corpus/<Target>, never grown in place).
#
#   scripts/fuzz.sh [seconds-per-target]      (default 30)
#
# Environment: FUZZ_TARGETS="FuzzJSON FuzzWhere" to run only some targets; FUZZ_SCRATCH for the build folder
# (default .build-fuzz); FUZZ_ARTIFACTS for where failing inputs are kept (default .build-fuzz/artifacts).
# Prints one line per target, `fuzz <Target>: <runs> runs, ok`, and exits non-zero when any target crashed,
# hung (10 s per input) or ran out of memory; the failing input is then kept and its path printed.
set -euo pipefail

seconds="${1:-30}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
    echo "usage: $0 [seconds-per-target]" >&2
    exit 2
fi

root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="${FUZZ_SCRATCH:-$root/.build-fuzz}"
artifacts="${FUZZ_ARTIFACTS:-$scratch/artifacts}"
targets=(${FUZZ_TARGETS:-FuzzJSON FuzzWhere FuzzWrite FuzzFileNames})
build=(swift build --package-path "$root/Fuzz" --scratch-path "$scratch" -c debug -Xswiftc -sanitize=fuzzer,address)

start=$(date +%s)
"${build[@]}" 2>&1 | grep -v "Cannot export local symbol" || true
# The pipe hides the build's status: a failed build leaves no binaries, which the next line reports.
bin="$("${build[@]}" --show-bin-path)"
for target in "${targets[@]}"; do
    [ -x "$bin/$target" ] || { echo "fuzz: build failed ($bin/$target missing)" >&2; exit 1; }
done
echo "fuzz: built in $(( $(date +%s) - start ))s"

work="$(mktemp -d "${TMPDIR:-/tmp}/parsley-fuzz.XXXXXX")"
trap 'rm -rf "$work"' EXIT

failed=0
for target in "${targets[@]}"; do
    corpus="$work/$target/corpus"
    mkdir -p "$corpus" "$work/$target/artifacts"
    cp -R "$root/Fuzz/Corpus/$target/." "$corpus/"
    args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$work/$target/artifacts/")
    dict="$root/Fuzz/Dictionaries/$target.dict"
    [ -f "$dict" ] && args+=(-dict="$dict")
    status=0
    # Swift's own crash backtracer is switched off: it reads the stack in a way AddressSanitizer reports as a
    # second error, burying the real message.
    SWIFT_BACKTRACE=enable=no "$bin/$target" "${args[@]}" "$corpus" > "$work/$target/log" 2>&1 || status=$?
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$target/log" | tail -n 1)"
    if [ "$status" -eq 0 ]; then
        echo "fuzz $target: ${runs:-?} runs, ok"
        continue
    fi
    failed=1
    echo "fuzz $target: ${runs:-?} runs, FAILED (exit $status)"
    grep -E "fuzz property violated|Fatal error|ERROR: |SUMMARY: |Test unit written|Base64:" "$work/$target/log" | head -n 20 | sed 's/^/    /'
    mkdir -p "$artifacts/$target"
    for input in "$work/$target/artifacts/"*; do
        [ -e "$input" ] || continue
        cp "$input" "$artifacts/$target/"
        echo "    failing input kept: $artifacts/$target/$(basename "$input")"
        echo "    reproduce: $bin/$target $artifacts/$target/$(basename "$input")"
    done
    cp "$work/$target/log" "$artifacts/$target/log"
done
exit "$failed"

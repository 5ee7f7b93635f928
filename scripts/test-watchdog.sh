#!/usr/bin/env bash
# Runs `swift test --skip-build` (after the build) with line-buffered output into LOG, and stops it with a report
# when it stalls: no finished test for STALL seconds, or more than LIMIT seconds in all. The report names the tests
# that started and never finished, and the threads of the test process (gdb), so that a hang in CI is a failure
# with its cause instead of a timeout with nothing.
#
#   scripts/test-watchdog.sh LOG [extra swift test arguments...]
# Environment: PARSLEY_TEST_STALL (default 600), PARSLEY_TEST_LIMIT (default 2700).
#
# It also turns on the tests' stall probe (Tests/ParsleyAPITests/Support/StallProbe.swift) and prints, at the end,
# how long the test process's task threads kept a new task waiting (every wait over a second): a test computing for
# seconds without a suspension holds back every other test's timers on a 2-core machine. PARSLEY_STALL_PROBE names
# the probe's folder; PARSLEY_STALL_PROBE_STACKS=N adds gdb stacks of the first N stalls there.
set -uo pipefail
log=$1
shift
stall=${PARSLEY_TEST_STALL:-600}
limit=${PARSLEY_TEST_LIMIT:-2700}
export PARSLEY_STALL_PROBE=${PARSLEY_STALL_PROBE:-$(mktemp -d /tmp/parsley-stalls.XXXXXX)}

stall_report() {
    local file="$PARSLEY_STALL_PROBE/stalls.log"
    if [ -s "$file" ]; then
        echo "=== test-watchdog: task threads kept a new task waiting over 1 s $(wc -l <"$file") times; the longest (probe folder $PARSLEY_STALL_PROBE) ==="
        sort -t' ' -k8 -rn "$file" | head -n 5
    else
        echo "=== test-watchdog: no task waited over 1 s for the test process's task threads ==="
    fi
}

: >"$log"
stdbuf -oL -eL swift test --skip-build "$@" >"$log" 2>&1 &
test_pid=$!
tail -n +1 -f --pid="$test_pid" "$log" &
tail_pid=$!

in_flight() {
    python3 - "$log" <<'EOF'
import re, sys
started, finished = [], set()
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r'◇ Test (?:"(.*?)"|(\S+\(\))) started', line)
    if m:
        started.append(m.group(1) or m.group(2))
    m = re.search(r'[✔✘] Test (?:"(.*?)"|(\S+\(\)))', line)
    if m:
        finished.add(m.group(1) or m.group(2))
for name in dict.fromkeys(started):
    if name not in finished:
        print("  still running:", name)
EOF
}

start=$(date +%s)
last_size=0
last_change=$start
while kill -0 "$test_pid" 2>/dev/null; do
    sleep $((stall < 20 ? 1 : 10))
    now=$(date +%s)
    size=$(grep -c -E '^[✔✘] ' "$log" 2>/dev/null || echo 0)
    if [ "$size" != "$last_size" ]; then
        last_size=$size
        last_change=$now
    fi
    if [ $((now - last_change)) -ge "$stall" ] || [ $((now - start)) -ge "$limit" ]; then
        sleep 1
        kill "$tail_pid" 2>/dev/null
        echo
        echo "=== test-watchdog: no test finished for $((now - last_change)) s ($((now - start)) s in all); stopping the run ==="
        in_flight
        stall_report
        for pid in $(pgrep -f 'PackageTests.xctest'); do
            echo "=== threads of the test process $pid ==="
            timeout 120 gdb -p "$pid" -batch -ex 'set pagination off' -ex 'thread apply all bt 25' 2>/dev/null \
                | grep -E '^(Thread|#)' | cut -c1-220 | head -n 1500
        done
        echo "=== child processes still running ==="
        ps -eo pid,ppid,etimes,args --forest | grep -E 'parsley|xctest|moto|aiosmtpd|postgres: ' | grep -v grep | cut -c1-200 | head -n 40
        pkill -KILL -P "$test_pid" 2>/dev/null
        pkill -KILL -f 'PackageTests.xctest' 2>/dev/null
        kill -KILL "$test_pid" 2>/dev/null
        exit 124
    fi
done
wait "$test_pid"
status=$?
sleep 1
kill "$tail_pid" 2>/dev/null
stall_report
exit "$status"

#!/bin/sh
# Usage: Fuzz/run.sh <target> [seconds] [extra libFuzzer flags, e.g. -fork=1 -ignore_crashes=1]   (build first, see README "## Fuzzing")
# New corpus inputs go to Fuzz/corpus/<target>/ (ignored), crashes to Fuzz/findings/<target>-*,
# and libFuzzer's log (with -jobs it writes fuzz-0.log in the working directory) to Fuzz/logs/<target>/.
# -detect_leaks=0: LeakSanitizer reports lazily initialised Swift globals (e.g. a `static let` Data) as leaked at exit.
set -e
here="$(cd "$(dirname "$0")" && pwd)"
t="$1"; secs="${2:-200}"; shift; [ $# -gt 0 ] && shift
mkdir -p "$here/corpus/$t" "$here/findings" "$here/logs/$t"
cd "$here/logs/$t"
export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"   # also for -fork children
"$here/.build/release/$t" "$here/corpus/$t" "$here/seeds/$t" \
  -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -jobs=1 -print_final_stats=1 -detect_leaks=0 \
  -artifact_prefix="$here/findings/$t-" "$@"

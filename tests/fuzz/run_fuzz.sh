#!/usr/bin/env bash
# Builds the libFuzzer target with clang-14, AddressSanitizer and UBSan in the sanitizer step's
# ASan tree, build-asan/ (tests/sanitize/clang_trees.sh: one tree, compiled once in CI, where the
# sanitizer step has already built it), only the target it needs, and fuzzes SubmitReportsRequest parsing, validation and storage for
# a bounded time (default 60 s; FUZZ_SECONDS overrides). The seed corpus (tests/fuzz/corpus) is
# read, never written: new inputs go to a scratch folder. A crash leaves crash-* in the build
# tree's fuzz-out/ and fails the script; copy it into tests/fuzz/regressions/ with the fix.
# CI: bash tests/fuzz/run_fuzz.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# clang-14 and its sanitizer/libFuzzer runtime (Debian); installed only when missing.
bash "$root/tools/install-clang.sh"
build=${DENIABLE_FUZZ_BUILD_DIR:-$root/build-asan}
seconds=${FUZZ_SECONDS:-60}
# shellcheck source=tests/sanitize/clang_trees.sh
. "$root/tests/sanitize/clang_trees.sh"
# DENIABLE_FUZZ_PREBUILT=1 (.ci/run, once the sanitize step's ASan build is done): the fuzzer is
# there already, and this neither reconfigures nor builds the tree the ASan runs use meanwhile.
if [ "${DENIABLE_FUZZ_PREBUILT:-0}" = 1 ] && [ -x "$build/tests/deniable_submit_reports_fuzzer" ]; then
  echo "fuzz: the fuzzer of $build, built by the sanitize step"
else
  configure_asan_tree "$root" "$build"
  cmake --build "$build" -j"$(nproc)" --target deniable_submit_reports_fuzzer
fi
out=$build/fuzz-out
rm -rf "$out" && mkdir -p "$out/corpus"
cd "$out"
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$build/tests/deniable_submit_reports_fuzzer" -max_total_time="$seconds" -timeout=10 \
  -rss_limit_mb=4096 -print_final_stats=1 "$out/corpus" "$root/tests/fuzz/corpus" \
  "$root/tests/fuzz/regressions" 2>&1 | tail -n 25
status=${PIPESTATUS[0]}
if ls "$out"/crash-* "$out"/leak-* "$out"/timeout-* >/dev/null 2>&1; then
  echo "fuzz: FAILED, see $out"; exit 1
fi
[ "$status" -eq 0 ] || { echo "fuzz: the fuzzer exited with $status"; exit 1; }
echo "fuzz: OK ($seconds s, no crash)"

#!/usr/bin/env bash
# The SDK under sanitizers (CI step `sanitize`, docs/ci.md). With clang-14 it configures two
# build trees of its own, build-tsan/ (ThreadSanitizer, and clang's -Wthread-safety as an error,
# DENIABLE_THREAD_SAFETY=ON, so the lock annotations of client/ and server/ are checked) and
# build-asan/ (AddressSanitizer + UndefinedBehaviorSanitizer, no recovery), builds in each only
# what it runs (the CLI that sets the harnesses up comes from the test step's build/), and runs:
#   - the SDK's unit tests (deniable_client_test),
#   - the SDK fault and outage tests (deniable_sdk_outage_test, deniable_sdk_storage_fault_test,
#     tests/sdk_fault_test.py over sdk_fault_driver),
#   - a short soak (tests/soak/run_soak.py, SANITIZE_SOAK_SECONDS, default 20, 2 devices).
# Every sanitized process writes its reports to a file (log_path); any report fails the step,
# including those of servers and devices the Python harnesses start and kill.
# Debian's gRPC, protobuf and Abseil are not instrumented: tsan.supp, lsan.supp and ubsan.supp
# hold the few suppressions that follow from that, each with its reason, and tsan_absl_mutex.cc
# tells ThreadSanitizer what absl::Mutex does (tsan_shim_check.cc proves it at each run).
# libstdc++ (not libc++): Debian's gRPC is built against it. -O1: sanitizers need little
# optimisation, and the build is most of the step. The ASan tree is also the fuzzing tree
# (clang_trees.sh): tests/fuzz/run_fuzz.sh reuses it, so CI compiles it once.
#   bash tests/sanitize/run_sanitizers.sh [--build-only] [tsan|asan]...   (default: both)
# --build-only configures and builds the trees and runs nothing: .ci/run starts it in the
# background at nice 19 before the test step, so the trees compile on the CPU that CTest leaves
# idle, and the sanitize step then finds them built (docs/ci.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/sanitize
bash "$root/tools/install-clang.sh"  # also installed by tools/install-deps.sh --ci
jobs=${SANITIZE_JOBS:-$(nproc)}
soak_seconds=${SANITIZE_SOAK_SECONDS:-20}
build_only=0
if [ "${1:-}" = --build-only ]; then build_only=1; shift; fi
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(tsan asan)
targets=(deniable_client_test deniable_sdk_outage_test deniable_sdk_storage_fault_test
         sdk_fault_driver soak_device deniable-server)
# The CLI only sets the harnesses up (tokens, metrics, queries): the test step's build of it
# (build/tools/deniable, GCC) is used when there is one, else each tree builds its own.
# DENIABLE_CLI set (by .ci/run) is trusted even before the test step has built it.
cli=${DENIABLE_CLI:-$root/build/tools/deniable}
[ -n "${DENIABLE_CLI:-}" ] || [ -x "$cli" ] || { cli=""; targets+=(deniable); }

log() { echo "sanitize: $*"; }

# shellcheck source=tests/sanitize/clang_trees.sh
. "$here/clang_trees.sh"

# run_all KIND: the tests and the soak over build-KIND, reports collected in build-KIND/reports.
run_all() {
  local kind=$1 build=$root/build-$kind
  local reports=$build/reports
  local cli_bin=${cli:-$build/tools/deniable}
  rm -rf "$reports" && mkdir -p "$reports"
  local common="log_path=$reports/$kind:print_suppressions=0"
  # ignore_noninstrumented_modules: memcpy, free, ... called from Debian's uninstrumented gRPC
  # and Abseil are not checked (their own synchronisation is invisible to TSan); see tsan.supp.
  export TSAN_OPTIONS="$common:suppressions=$here/tsan.supp:halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1"
  export ASAN_OPTIONS="$common:detect_leaks=1:detect_stack_use_after_return=1"
  export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="$common:suppressions=$here/ubsan.supp:print_stacktrace=1:halt_on_error=1"
  local failed=0 t0
  step_run() {
    local what=$1; shift
    t0=$(date +%s)
    if "$@" >"$reports/$what.out" 2>&1; then
      log "$kind $what passed ($(( $(date +%s) - t0 )) s)"
    else
      log "$kind $what FAILED (exit $?), its output:"; tail -n 60 "$reports/$what.out"; failed=1
    fi
  }
  step_run client_test "$build/client/deniable_client_test" --gtest_brief=1
  step_run outage_test "$build/tests/deniable_sdk_outage_test" --gtest_brief=1
  step_run storage_fault_test "$build/tests/deniable_sdk_storage_fault_test" --gtest_brief=1
  step_run sdk_fault python3 "$root/tests/sdk_fault_test.py" "$build/server/deniable-server" \
    "$cli_bin" "$build/tests/sdk_fault_driver" 50
  step_run soak python3 "$root/tests/soak/run_soak.py" "$build/server/deniable-server" \
    "$cli_bin" "$build/tests/soak_device" "$soak_seconds" 2
  unset TSAN_OPTIONS ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
  if compgen -G "$reports/$kind.*" >/dev/null; then
    log "$kind: sanitizer reports (from the processes above, the harnesses' children included):"
    cat "$reports/$kind".*
    failed=1
  fi
  return $failed
}

status=0
for kind in "${kinds[@]}"; do
  t0=$(date +%s)
  case $kind in
    tsan)
      # The Abseil shim goes into every executable, its definitions exported so that gRPC's and
      # Abseil's own calls reach them too. CMake does not know the object (a linker flag): a
      # changed one removes the programs, so that they are linked again.
      shim=$root/build-tsan/tsan_absl_mutex.o
      mkdir -p "$root/build-tsan"
      clang++-14 -std=c++20 -fsanitize=thread -fno-exceptions -fno-rtti -O1 -fPIC \
        -c "$here/tsan_absl_mutex.cc" -o "$shim.new"
      if ! cmp -s "$shim.new" "$shim"; then
        mv "$shim.new" "$shim"
        rm -f "$root"/build-tsan/{client,tests,server,tools}/{deniable_client_test,deniable_sdk_outage_test,deniable_sdk_storage_fault_test,sdk_fault_driver,soak_device,deniable-server,deniable}
      else
        rm -f "$shim.new"
      fi
      # The shim works: no report for a Mutex-guarded counter, one for an unguarded one.
      check=$root/build-tsan/tsan_shim_check
      clang++-14 -std=c++20 -fsanitize=thread -O1 "$here/tsan_shim_check.cc" "$shim" -ldl \
        -Wl,--export-dynamic-symbol='_ZN4absl7debian35Mutex*' -labsl_synchronization -o "$check"
      TSAN_OPTIONS=exitcode=66 "$check" 2>/dev/null || { log "tsan: the Abseil shim hides nothing? a guarded counter was reported"; exit 1; }
      rc=0; TSAN_OPTIONS=exitcode=66 "$check" race 2>/dev/null || rc=$?
      [ "$rc" = 66 ] || { log "tsan: an unguarded counter was not reported (exit $rc)"; exit 1; }
      log "tsan: the Abseil shim orders absl::Mutex and a race is still reported"
      configure_clang_tree "$root" "$root/build-tsan" "-fsanitize=thread" \
        "-fsanitize=thread $root/build-tsan/tsan_absl_mutex.o -ldl \
-Wl,--export-dynamic-symbol=_ZN4absl7debian35Mutex* \
-Wl,--export-dynamic-symbol=_ZN4absl7debian37CondVar*" \
        -DDENIABLE_THREAD_SAFETY=ON
      ;;
    asan)
      # The tree tests/fuzz/run_fuzz.sh fuzzes in too: its fuzzer is built here with the rest.
      configure_asan_tree "$root" "$root/build-asan"
      ;;
    *) echo "run_sanitizers.sh: unknown kind $kind (tsan or asan)" >&2; exit 2 ;;
  esac
  kind_targets=("${targets[@]}")
  [ "$kind" != asan ] || kind_targets+=(deniable_submit_reports_fuzzer)
  if ! cmake --build "$root/build-$kind" -j"$jobs" --target "${kind_targets[@]}" \
      >"$root/build-$kind/build.log" 2>&1; then
    grep -v '^\[' "$root/build-$kind/build.log" | tail -n 80
    log "$kind: build FAILED"; exit 1
  fi
  log "$kind: built in $(( $(date +%s) - t0 )) s"
  t1=$(date +%s)
  [ "$build_only" = 0 ] || continue
  run_all "$kind" || status=1
  log "$kind: ran in $(( $(date +%s) - t1 )) s"
done
[ "$status" -eq 0 ] && log "OK (${kinds[*]})" || log "FAILED"
exit "$status"

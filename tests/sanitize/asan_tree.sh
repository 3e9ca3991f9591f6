# Sourced by tests/sanitize/run_sanitizers.sh and tests/fuzz/run_fuzz.sh: one AddressSanitizer +
# UBSan tree (build-asan/) serves both the sanitizer step and fuzzing, so CI compiles it once.
# Every file is compiled with -fsanitize=fuzzer-no-link (libFuzzer's coverage counters, inert
# without libFuzzer: the sanitizer runtime defines their hooks) and the fuzzer target itself,
# tests/CMakeLists.txt's deniable_submit_reports_fuzzer, links -fsanitize=fuzzer
# (DENIABLE_FUZZ=ON). -O1 -gline-tables-only: sanitizers need little optimisation, and the
# build is most of the step. ccache, when installed, serves every tree (docs/ci.md).

# configure_asan_tree ROOT BUILD_DIR: configures (or reconfigures, a no-op when nothing changed)
# the tree. Prints nothing; cmake's own errors go to stderr.
configure_asan_tree() {
  local root=$1 build=$2
  local opt="-O1 -gline-tables-only -fno-omit-frame-pointer"
  local sanitize="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link"
  local launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 "${launcher[@]}" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$opt" \
    -DCMAKE_CXX_FLAGS="$sanitize" -DCMAKE_C_FLAGS="$sanitize" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DDENIABLE_BUILD_BENCH=OFF -DDENIABLE_BUILD_EXAMPLES=OFF -DDENIABLE_FUZZ=ON >/dev/null
}

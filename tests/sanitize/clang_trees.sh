# Sourced by tests/sanitize/run_sanitizers.sh and tests/fuzz/run_fuzz.sh: how the clang-14
# sanitizer trees are configured. One AddressSanitizer + UBSan tree (build-asan/) serves both
# the sanitizer step and fuzzing, so CI compiles it once: every file is compiled with
# -fsanitize=fuzzer-no-link (libFuzzer's coverage counters, inert without libFuzzer: the
# sanitizer runtime defines their hooks) and the fuzzer target itself, tests/CMakeLists.txt's
# deniable_submit_reports_fuzzer, links -fsanitize=fuzzer (DENIABLE_FUZZ=ON). Both trees at -O0
# (a compile in two thirds of -O1's CPU under TSan, half under ASan + UBSan; the SDK and server
# runs are short), except the fuzzer and the libraries it links, at -O1 (DENIABLE_FUZZ_OPT: it
# runs 4.6 times as many inputs as at -O0); -gline-tables-only for the reports' stack lines.
# ccache, when installed, serves every tree, in depend mode (docs/ci.md).

# ccache's depend mode, for every build of these trees (the scripts that source this file): a
# miss runs the compiler alone (no preprocessor pass to hash: about 4 % of a compile), a hit is
# found from the files the last compile read (docs/ci.md).
export CCACHE_DEPEND=${CCACHE_DEPEND:-1}

# configure_clang_tree ROOT BUILD_DIR COMPILE_FLAGS LINK_FLAGS [CMAKE ARGS...]: configures (or
# reconfigures, a no-op when nothing changed) a tree. Prints nothing; cmake's errors go to stderr.
configure_clang_tree() {
  local root=$1 build=$2 cflags=$3 ldflags=$4; shift 4
  local opt="-O0 -gline-tables-only -fno-omit-frame-pointer"
  local launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 "${launcher[@]}" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$opt" \
    -DCMAKE_CXX_FLAGS="$cflags" -DCMAKE_C_FLAGS="$cflags" \
    -DCMAKE_EXE_LINKER_FLAGS="$ldflags" -DCMAKE_SHARED_LINKER_FLAGS="$ldflags" \
    -DDENIABLE_BUILD_BENCH=OFF -DDENIABLE_BUILD_EXAMPLES=OFF "$@" >/dev/null
}

# configure_asan_tree ROOT BUILD_DIR: the ASan + UBSan tree of the sanitize and fuzz steps.
configure_asan_tree() {
  configure_clang_tree "$1" "$2" \
    "-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link" \
    "-fsanitize=address,undefined" -DDENIABLE_FUZZ=ON -DDENIABLE_FUZZ_OPT=-O1
}

# Unity builds for the project's libraries and its two shipped programs (docs/ci.md, "Unity
# batches").
#
# Most of a source's compile time is the headers it shares with its neighbours (gRPC, protobuf,
# Abseil) and the templates they instantiate. A unity batch compiles up to 16 sources of one
# target as one translation unit, so that work is done once per batch: measured on the 11
# sources of deniable_server_service, 17.8 s of CPU as one batch against 77.6 s one by one
# (GCC 12, -O2). Generated protobuf sources stay one by one (they define the same file-level
# tables), and so do the benchmarks, whose sources each keep helpers of the same names in their
# anonymous namespaces.
#
# The GoogleTest programs (`*_test`) of more than one source compile in batches too: each test
# source wraps its anonymous namespace's content in a namespace named after the file (`namespace
# {` + `namespace reporter_test {`), so the helpers every test file keeps under the same names
# (kNow, MakeConfig, Field(), ...) stay apart in a batch. A new test source of such a program
# does the same. Single-source test programs stay one by one (a batch of one saves nothing).
#
# What a unity batch asks of a library source: names in its anonymous namespace that no other
# source of the same target uses (a batch shares one anonymous namespace), and no `using
# namespace` at file scope. A clash is a compile error, never a silent change.
#
# DENIABLE_UNITY_BUILD (default ON): tools/test.sh, the sanitizer trees and the image's build
# all use it, so the image's objects are the test build's (ccache). OFF compiles one by one
# (a developer editing one file of a large library rebuilds less).
#
# deniable_unity_build(): call once at the end of the top-level CMakeLists.txt, after every
# add_subdirectory: it turns unity off for every executable but deniable-server, deniable and
# the `*_test` programs of two or more C++ sources.
include(${CMAKE_CURRENT_LIST_DIR}/DeniableTargets.cmake)
function(deniable_unity_build)
  deniable_project_targets(targets)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type STREQUAL "EXECUTABLE" OR target MATCHES "^(deniable-server|deniable)$")
      continue()
    endif()
    if(target MATCHES "_test$")
      get_target_property(sources ${target} SOURCES)
      list(FILTER sources INCLUDE REGEX "\\.(cc|cpp|cxx)$")
      list(LENGTH sources count)
      if(count GREATER 1)
        continue()
      endif()
    endif()
    set_target_properties(${target} PROPERTIES UNITY_BUILD OFF)
  endforeach()
endfunction()

# Test programs' own sources at -Og in Release builds (tools/test.sh, CI's test step).
#
# The test sources are half of the host build's compile time (docs/ci.md "Build"); at -Og a
# test source compiles in about 0.79 of its -O2 time (numeric_cli_test.cc: 7.5 s against
# 9.5 s of CPU), while the code under test, in the libraries, the server and the CLI, stays at
# -O2. A precompiled header of gtest, gmock, gRPC and protobuf saved only 0.1 of the same
# source's time (most of it is instantiating templates, not parsing), so there is none.
#
# deniable_optimize_tests_for_build_time(): every executable target whose name ends in _test
# (the GoogleTest programs), in every directory of the project. Call it once, at the end of the
# top-level CMakeLists.txt, after every add_subdirectory.
include(${CMAKE_CURRENT_LIST_DIR}/DeniableTargets.cmake)
function(deniable_optimize_tests_for_build_time)
  deniable_project_targets(targets)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE" AND target MATCHES "_test$")
      target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-Og>)
    endif()
  endforeach()
endfunction()

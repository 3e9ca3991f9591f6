# How CTest schedules the suite when tools/test.sh runs it with -j above the core count (three
# jobs per core: most tests wait on servers, browsers and timeouts, docs/ci.md "CTest").
#
# deniable_test_schedule(COST seconds [PROCESSORS n] TESTS name...)
#   COST: the test's measured wall time in seconds (docs/ci.md), so that CTest starts the
#   longest tests first and the suite does not end waiting on one of them. A clean checkout has
#   no CTestCostData.txt from an earlier run; this is what CTest falls back on.
#   PROCESSORS: for tests that compile or run a browser or a JVM with several threads, so that
#   CTest counts them as that many of its -j slots.
# Tests that do not exist in this configuration (npm or a JDK absent) are passed over. Call it in
# the directory that adds the tests (CMake 3.25 sets test properties per directory).
function(deniable_test_schedule)
  cmake_parse_arguments(ARG "" "COST;PROCESSORS" "TESTS" ${ARGN})
  foreach(name IN LISTS ARG_TESTS)
    if(NOT TEST ${name})
      continue()
    endif()
    set_tests_properties(${name} PROPERTIES COST ${ARG_COST})
    if(ARG_PROCESSORS)
      set_tests_properties(${name} PROPERTIES PROCESSORS ${ARG_PROCESSORS})
    endif()
  endforeach()
endfunction()

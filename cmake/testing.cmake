include(GoogleTest)

# numtrace_add_test(NAME SOURCES a.cc ... LIBS lib ... [LABELS gpu ...])
# One GoogleTest binary; each TEST becomes its own ctest entry. Tests find
# their data (fixtures, the real kernel-name lists) in the repository through
# NUMTRACE_TEST_DATA_DIR (test/util/test_paths.h); nothing outside the
# checkout is read.
#
# The paths themselves are compiled into one generated source, not passed as
# definitions to every test (test/util/test_paths.h says why).
configure_file(${PROJECT_SOURCE_DIR}/cmake/test_paths.cc.in
               ${PROJECT_BINARY_DIR}/generated/test_paths.cc @ONLY)
add_library(numtrace_test_paths STATIC ${PROJECT_BINARY_DIR}/generated/test_paths.cc)
target_include_directories(numtrace_test_paths PUBLIC ${PROJECT_SOURCE_DIR})

function(numtrace_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} numtrace_test_paths GTest::gtest GTest::gmock GTest::gtest_main)
  # Shared test helpers (test/util/...) are included from the repo root, also
  # by tests that link no numtrace library.
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  # The tests' own sources at -O1: they are more than half of the build's
  # compile time, and -O3 buys them nothing (measured on
  # tensor_command_test.cc: 17.5 s of CPU at -O3, 12.5 s at -O1). The code
  # under test is the libraries', built as the release is; no option here
  # changes floating-point semantics (no -ffast-math, no FMA contraction).
  target_compile_options(${name} PRIVATE $<$<CONFIG:Release>:-O1>)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/test-bin)
  # Batches of test sources compiled as one: each test file spends most of
  # its compilation parsing the same headers (GoogleTest, Abseil, simdjson),
  # which a batch parses once. Precompiled headers would do the same but GCC
  # writes a different .gch on every build, so ccache could never reuse the
  # tests' objects in the standalone clone (docs/benchmarks.md).
  set_target_properties(${name} PROPERTIES UNITY_BUILD ${NUMTRACE_UNITY_BUILD} UNITY_BUILD_BATCH_SIZE 8)
  set(labels cpu)
  if(ARG_LABELS)
    set(labels ${ARG_LABELS})
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST PROPERTIES LABELS "${labels}")
endfunction()

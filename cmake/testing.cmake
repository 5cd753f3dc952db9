include(GoogleTest)

# numtrace_add_test(NAME SOURCES a.cc ... LIBS lib ... [LABELS gpu ...])
# One GoogleTest binary; each TEST becomes its own ctest entry. Tests find
# their data (fixtures, the real kernel-name lists) in the repository through
# NUMTRACE_TEST_DATA_DIR; nothing outside the checkout is read.
function(numtrace_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  # Shared test helpers (test/util/...) are included from the repo root, also
  # by tests that link no numtrace library.
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${name} PRIVATE
    NUMTRACE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    NUMTRACE_BINARY_DIR="${PROJECT_BINARY_DIR}"
    NUMTRACE_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/test/data")
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/test-bin)
  set(labels cpu)
  if(ARG_LABELS)
    set(labels ${ARG_LABELS})
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST PROPERTIES LABELS "${labels}")
endfunction()

// Where a test finds the checkout and the build: the source folder (data
// under test/data, examples, docs), the build folder (bin/, lib/, test-bin/)
// and test/data.
//
// Why functions and not -D definitions on the command line: a path on every
// test's command line made each test object differ between two checkouts,
// so check-standalone.sh's clone (another folder) compiled every test again.
// The paths live in one generated source (cmake/test_paths.cc.in, the
// numtrace_test_paths library every numtrace_add_test links), and only that
// one file differs. The macro names stay the ones the tests always used.
#ifndef NUMTRACE_TEST_UTIL_TEST_PATHS_H_
#define NUMTRACE_TEST_UTIL_TEST_PATHS_H_

namespace numtrace::test {
const char* SourceDir();    // the checkout (PROJECT_SOURCE_DIR)
const char* BinaryDir();    // the build folder (PROJECT_BINARY_DIR)
const char* TestDataDir();  // SourceDir()/test/data
}  // namespace numtrace::test

#define NUMTRACE_SOURCE_DIR (::numtrace::test::SourceDir())
#define NUMTRACE_BINARY_DIR (::numtrace::test::BinaryDir())
#define NUMTRACE_TEST_DATA_DIR (::numtrace::test::TestDataDir())

#endif  // NUMTRACE_TEST_UTIL_TEST_PATHS_H_

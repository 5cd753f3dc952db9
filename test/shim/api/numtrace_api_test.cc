// Loads the built libnumtrace.so with dlopen (as Python's ctypes does) and
// checks its exported surface and the behaviour of an inactive library.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "common/version/version.h"

namespace {

class ApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // No CUDA here: the library must load and stay inert.
    handle = dlopen(NUMTRACE_SO_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
  }
  template <typename F>
  static F Sym(const char* name) {
    return reinterpret_cast<F>(dlsym(handle, name));
  }
  static void* handle;
};
void* ApiTest::handle = nullptr;

TEST_F(ApiTest, VersionAndInactiveCalls) {
  auto version = Sym<const char* (*)()>("numtrace_version");
  ASSERT_NE(version, nullptr);
  EXPECT_STREQ(version(), numtrace::kVersion);  // the one definition, from CMake
  auto active = Sym<int (*)()>("numtrace_is_active");
  ASSERT_NE(active, nullptr);
  EXPECT_EQ(active(), 0);
  for (const char* name : {"numtrace_mark_step", "numtrace_capture_begin", "numtrace_capture_end"}) {
    auto fn = Sym<int (*)()>(name);
    ASSERT_NE(fn, nullptr) << name;
    EXPECT_EQ(fn(), 0) << name;  // nothing started: a harmless no-op
  }
}

TEST_F(ApiTest, AnnotateValidatesBeforeCudaStarts) {
  auto annotate = Sym<int (*)(const char*, const char*)>("numtrace_annotate_kernel");
  ASSERT_NE(annotate, nullptr);
  EXPECT_EQ(annotate("my_kernel", "bf16,bf16,f32,i64"), 0);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(annotate("my_kernel", "bf16,half"), -1);
  EXPECT_EQ(annotate(nullptr, "f32"), -1);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("'half'"), std::string::npos) << err;
}

TEST_F(ApiTest, OnlyTheCApiAndInjectionAreExported) {
  // Internal C++ symbols stay hidden (version script, hidden visibility).
  EXPECT_EQ(dlsym(handle, "_ZN8numtrace4shim7Runtime3GetEv"), nullptr);
  EXPECT_EQ(dlsym(handle, "_ZN8numtrace4shim11ParseConfigERKSt8functionIFPKcS3_EEPNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"), nullptr);
  EXPECT_NE(dlsym(handle, "numtrace_mark_step"), nullptr);
}

}  // namespace

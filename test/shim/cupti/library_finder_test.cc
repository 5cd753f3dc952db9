// File: test/shim/cupti/library_finder_test.cc
//
// The CUPTI/driver search order, over fake library files in a temp folder.
#include "shim/driver/library_finder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace numtrace::shim {
namespace {

namespace fs = std::filesystem;

class LibraryFinderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("numtrace_finder_" + std::to_string(getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string Touch(const std::string& rel) {
    fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "not an ELF";
    return p.string();
  }

  fs::path root_;
};

TEST_F(LibraryFinderTest, OrderIsLoadedOverrideCudaHomeDefaultTorchLoader) {
  std::string loaded = Touch("loaded/libcupti.so.13");
  std::string override_lib = Touch("override/libcupti-custom.so");
  std::string home_lib = Touch("cudahome/lib64/libcupti.so.13");
  std::string home_extras = Touch("cudahome/extras/CUPTI/lib64/libcupti.so");
  std::string def_lib = Touch("default/lib64/libcupti.so.13");
  std::string torch_lib = Touch("site-packages/nvidia/cuda_cupti/lib/libcupti.so.13");
  std::string torch_so = Touch("site-packages/torch/lib/libtorch_cuda.so");

  LibrarySearch in;
  in.env_override = override_lib;
  in.cuda_home = (root_ / "cudahome").string();
  in.default_cuda_home = (root_ / "default").string();
  in.loaded = {"/lib/x86_64-linux-gnu/libc.so.6", torch_so, loaded};
  std::vector<std::string> c = CuptiCandidates(in);
  std::vector<std::string> want = {loaded,   override_lib, home_lib, home_extras,
                                   def_lib,  torch_lib,    "libcupti.so.13", "libcupti.so"};
  EXPECT_EQ(c, want);
}

TEST_F(LibraryFinderTest, MissingFilesAreSkippedAndNothingRepeats) {
  std::string home_lib = Touch("cudahome/lib64/libcupti.so.13");
  LibrarySearch in;
  in.env_override = (root_ / "nope/libcupti.so").string();
  in.cuda_home = (root_ / "cudahome").string();
  in.default_cuda_home = (root_ / "cudahome").string();  // same folder twice
  std::vector<std::string> c = CuptiCandidates(in);
  std::vector<std::string> want = {home_lib, "libcupti.so.13", "libcupti.so"};
  EXPECT_EQ(c, want);
}

TEST_F(LibraryFinderTest, FindsCuptiBesideWheelCudart) {
  std::string cudart = Touch("sp/nvidia/cuda_runtime/lib/libcudart.so.13");
  std::string cupti = Touch("sp/nvidia/cuda_cupti/lib/libcupti.so.13");
  std::string cu13_rt = Touch("sp2/nvidia/cu13/lib/libcudart.so.13");
  std::string cu13_cupti = Touch("sp2/nvidia/cu13/lib/libcupti.so.13");
  LibrarySearch in;
  in.default_cuda_home = "";
  in.loaded = {cudart, cu13_rt};
  std::vector<std::string> c = CuptiCandidates(in);
  ASSERT_GE(c.size(), 2u);
  EXPECT_EQ(c[0], cupti);
  EXPECT_EQ(c[1], cu13_cupti);
}

TEST_F(LibraryFinderTest, DriverPrefersLoadedCopyAndNeverStubs) {
  std::string drv = Touch("drv/libcuda.so.1");
  LibrarySearch in;
  in.loaded = {drv};
  std::vector<std::string> c = DriverCandidates(in);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0], drv);
  EXPECT_EQ(c[1], "libcuda.so.1");
  EXPECT_TRUE(IsLoaded(in.loaded, "libcuda.so"));
  EXPECT_FALSE(IsLoaded(in.loaded, "libcupti.so"));
}

TEST_F(LibraryFinderTest, OpenFirstReportsEveryFailure) {
  std::string bogus = Touch("bad/libcupti.so.13");
  LoadedLibrary lib = OpenFirst({bogus, "libnumtrace_no_such_library.so.7"});
  EXPECT_EQ(lib.handle, nullptr);
  EXPECT_NE(lib.tried.find(bogus), std::string::npos) << lib.tried;
  EXPECT_NE(lib.tried.find("libnumtrace_no_such_library.so.7"), std::string::npos) << lib.tried;
  LoadedLibrary libc = OpenFirst({"libnumtrace_no_such_library.so.7", "libc.so.6"});
  EXPECT_NE(libc.handle, nullptr);
  EXPECT_EQ(libc.path, "libc.so.6");
}

TEST(LoadedLibraryPaths, ListsThisProcess) {
  std::vector<std::string> paths = LoadedLibraryPaths();
  EXPECT_TRUE(IsLoaded(paths, "libc.so")) << "libc is always loaded";
}

TEST(LoadedLibraryVersions, DecodesAndNeverLoads) {
  EXPECT_EQ(CudaRuntimeVersionText(12040), "12.4");
  EXPECT_EQ(CudaRuntimeVersionText(13000), "13.0");
  EXPECT_EQ(NcclVersionText(22703), "2.27.3");
  EXPECT_EQ(NcclVersionText(2804), "2.8.4");
  // A library that is not loaded (here: a path nothing loaded) is not loaded
  // by the query, and its key stays absent.
  const std::string missing = ::testing::TempDir() + "/libcublas.so.12";
  EXPECT_TRUE(LoadedLibraryVersions({missing, "libnccl.so.2", "libcudnn.so.9", "libcudart.so.12"}).empty());
  EXPECT_FALSE(IsLoaded(LoadedLibraryPaths(), "libcublas.so"));
}

}  // namespace
}  // namespace numtrace::shim

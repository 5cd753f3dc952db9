// The .npy reader reads what the dumper writes, for every dtype, and what
// NumPy writes; bad files are refused with a reason naming the file.
#include "analyzer/tensors/npy_reader.h"

#include <gtest/gtest.h>

#include "common/format/npy.h"
#include "test/analyzer/tensors/dump_files.h"

namespace numtrace::analyzer {
namespace {

TEST(NpyReaderTest, ReadsBackEveryDtypeTheDumperWrites) {
  for (int i = 0; i < kDTypeCount; ++i) {
    const DType t = static_cast<DType>(i);
    std::vector<uint8_t> bytes(48);
    for (size_t j = 0; j < bytes.size(); ++j) bytes[j] = static_cast<uint8_t>(j * 5 + i);
    const std::string header = NpyHeader(t, NpyElementCount(t, bytes.size()));
    EXPECT_EQ(header.size() % 64, 0u) << DTypeName(t);
    EXPECT_EQ(header.back(), '\n');
    std::string file = header + std::string(bytes.begin(), bytes.end());
    absl::StatusOr<NpyArray> a = ParseNpy(file, "x.npy");
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(a->descr, NpyDescr(t));
    EXPECT_EQ(a->count, 48u / DTypeSize(t));
    EXPECT_EQ(a->data, bytes);
  }
}

TEST(NpyReaderTest, DescrsMapBackToTraceDtypes) {
  EXPECT_EQ(DTypeForDescr("<f4"), DType::kF32);
  EXPECT_EQ(DTypeForDescr("<u2"), DType::kBF16);
  EXPECT_EQ(DTypeForDescr("|u1"), DType::kU8);
  EXPECT_EQ(DTypeForDescr("|b1"), DType::kBool);
  EXPECT_EQ(DTypeForDescr("<c8"), std::nullopt);
}

TEST(NpyReaderTest, ReadsNumpysOwnLayoutFlat) {
  // numpy.save(np.zeros((2, 3), '<i2')) in version 1.0, spelled out.
  std::string dict = "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }";
  dict.append(128 - 10 - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::string file("\x93NUMPY\x01\x00", 8);
  file.push_back(static_cast<char>(dict.size()));
  file.push_back('\0');
  file += dict + std::string(12, '\0');
  absl::StatusOr<NpyArray> a = ParseNpy(file, "np.npy");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->count, 6u);
  EXPECT_EQ(a->data.size(), 12u);
}

TEST(NpyReaderTest, RefusesWhatIsNotTheBuffersBytes) {
  const std::string good = NpyHeader(DType::kF32, 2) + std::string(8, '\0');
  auto expect_bad = [](const std::string& bytes, std::string_view why) {
    absl::StatusOr<NpyArray> a = ParseNpy(bytes, "bad.npy");
    ASSERT_FALSE(a.ok()) << why;
    const std::string message(a.status().message());
    EXPECT_NE(message.find("bad.npy"), std::string::npos);
    EXPECT_NE(message.find(why), std::string::npos) << a.status();
  };
  expect_bad("hello", "magic");
  expect_bad(good.substr(0, good.size() - 1), "data bytes");
  expect_bad(good + "x", "data bytes");
  std::string big = good;
  big.replace(big.find("<f4"), 3, ">f4");
  expect_bad(big, "little-endian");
  std::string fortran = NpyHeader(DType::kF32, 2);
  fortran.replace(fortran.find("False"), 5, "True ");
  fortran.replace(fortran.find("(2,)"), 4, "(1,2)");
  expect_bad(fortran + std::string(8, '\0'), "Fortran");
  std::string v9 = good;
  v9[6] = 9;
  expect_bad(v9, "version");
  std::string noshape = good;
  noshape.replace(noshape.find("'shape'"), 7, "'shapx'");
  expect_bad(noshape, "shape");
  EXPECT_FALSE(ReadNpy("/nonexistent/x.npy").ok());
}

}  // namespace
}  // namespace numtrace::analyzer

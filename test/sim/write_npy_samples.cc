// write_npy_samples DIR: one .npy per trace dtype, laid out by the dumper's
// own header code (common/format/npy.h), plus DIR/<dtype>.npy.bytes holding
// the payload alone, for dump_numpy_test.sh to check NumPy against.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/format/npy.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_npy_samples DIR\n");
    return 2;
  }
  std::filesystem::create_directories(argv[1]);
  for (int i = 0; i < numtrace::kDTypeCount; ++i) {
    const auto t = static_cast<numtrace::DType>(i);
    std::string payload(40, '\0');
    for (size_t j = 0; j < payload.size(); ++j) payload[j] = static_cast<char>(j * 13 + i);
    if (t == numtrace::DType::kBool) {
      for (char& c : payload) c = static_cast<char>(c & 1);  // NumPy's bool is 0 or 1
    }
    const std::string base = std::string(argv[1]) + "/" + std::string(numtrace::DTypeName(t)) + ".npy";
    std::ofstream(base, std::ios::binary) << numtrace::NpyHeader(t, numtrace::NpyElementCount(t, payload.size()))
                                          << payload;
    std::ofstream(base + ".bytes", std::ios::binary) << payload;
  }
  return 0;
}

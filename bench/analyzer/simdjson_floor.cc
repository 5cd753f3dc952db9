// File: bench/analyzer/simdjson_floor.cc
//
// numtrace-simdjson-floor: the least work any trace reader must do - load
// each file and, with simdjson On Demand, visit every kernel's name and
// every buffer's statistics, building nothing. Its time is the floor that
// numtrace-diff's parse time is compared against in docs/benchmarks.md.
//
// Example:
//   numtrace-simdjson-floor runA/rank_0.ntrace.jsonl runB/rank_0.ntrace.jsonl
//   # 2 files, 480.3 MB, 400000 kernels, 1200000 buffers: 0.61 s, 787 MB/s
#include <chrono>
#include <cstdio>
#include <string_view>

#include "simdjson.h"

#define NUMTRACE_STRINGIFY_(x) #x
#define NUMTRACE_STRINGIFY(x) NUMTRACE_STRINGIFY_(x)

namespace {

struct Tally {
  uint64_t bytes = 0, kernels = 0, buffers = 0, name_bytes = 0;
  double checksum = 0;  // keeps the visits from being optimised away
};

// Returns false (after printing why) on a file that cannot be read or parsed.
bool VisitFile(simdjson::ondemand::parser& parser, const char* path, Tally& t) {
  simdjson::padded_string json;
  if (auto err = simdjson::padded_string::load(path).get(json); err) {
    std::fprintf(stderr, "numtrace-simdjson-floor: %s: %s\n", path, simdjson::error_message(err));
    return false;
  }
  t.bytes += json.size();
  simdjson::ondemand::document_stream stream;
  if (auto err = parser.iterate_many(json, 16 << 20).get(stream); err) {
    std::fprintf(stderr, "numtrace-simdjson-floor: %s: %s\n", path, simdjson::error_message(err));
    return false;
  }
  uint64_t line = 0;
  for (auto doc_result : stream) {
    ++line;
    std::string_view type;
    if (doc_result.error() != simdjson::SUCCESS ||
        doc_result.value_unsafe()["type"].get_string().get(type)) {
      std::fprintf(stderr, "numtrace-simdjson-floor: %s:%llu: not a JSON record with a type\n",
                   path, static_cast<unsigned long long>(line));
      return false;
    }
    if (type != "kernel") continue;
    std::string_view name;
    simdjson::ondemand::array buffers;
    simdjson::ondemand::document_reference doc = doc_result.value_unsafe();
    if (doc["name"].get_string().get(name) || doc["buffers"].get_array().get(buffers)) {
      std::fprintf(stderr, "numtrace-simdjson-floor: %s:%llu: kernel without name or buffers\n",
                   path, static_cast<unsigned long long>(line));
      return false;
    }
    ++t.kernels;
    t.name_bytes += name.size();
    for (auto buffer : buffers) {
      simdjson::ondemand::object stats;
      if (buffer["stats"].get_object().get(stats)) continue;
      ++t.buffers;
      uint64_t n = 0;
      double v = 0;
      std::string_view hash;
      if (!stats["n"].get_uint64().get(n)) t.checksum += static_cast<double>(n);
      for (const char* field : {"min", "max", "sum", "l1", "l2"}) {
        if (!stats[field].get_double().get(v)) t.checksum += v;
      }
      if (!stats["hash"].get_string().get(hash)) t.checksum += static_cast<double>(hash.size());
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: numtrace-simdjson-floor FILE...\n");
    return 2;
  }
  simdjson::ondemand::parser parser;
  Tally t;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 1; i < argc; ++i) {
    if (!VisitFile(parser, argv[i], t)) return 2;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The kernels On Demand was compiled with here (the library's own
  // builtin_implementation() reports how libsimdjson.so was built instead).
  std::printf("simdjson %s: ", NUMTRACE_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION));
  std::printf("%d files, %.1f MB, %llu kernels, %llu buffers: %.3f s, %.0f MB/s (checksum %g)\n",
              argc - 1, t.bytes / 1e6, static_cast<unsigned long long>(t.kernels),
              static_cast<unsigned long long>(t.buffers), secs, t.bytes / 1e6 / secs, t.checksum);
  return 0;
}

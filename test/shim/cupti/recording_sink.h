// File: test/shim/cupti/recording_sink.h
//
// An EventSink for the CUDA layer's tests that keeps what the activity glue
// and the session report: unmeasured kernels and warnings (notes).
#ifndef NUMTRACE_TEST_SHIM_CUPTI_RECORDING_SINK_H_
#define NUMTRACE_TEST_SHIM_CUPTI_RECORDING_SINK_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shim/engine/null_sink.h"

namespace numtrace::shim {

class RecordingSink : public NullSink {
 public:
  struct Unmeasured {
    std::string name;
    uint64_t count;
    bool in_graph;
  };
  void OnUnmeasured(std::string_view name, uint64_t count, bool in_graph) override {
    seen.push_back({std::string(name), count, in_graph});
  }
  void OnWarning(std::string_view msg) override { warnings.emplace_back(msg); }
  std::vector<Unmeasured> seen;
  std::vector<std::string> warnings;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_TEST_SHIM_CUPTI_RECORDING_SINK_H_

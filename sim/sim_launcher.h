// File: sim/sim_launcher.h
//
// Launches a simulated kernel the way the CUDA driver and the CUPTI layer
// would present it to the engine: parameters packed at their natural
// alignment (the offsets cuFuncGetParamInfo reports), OnLaunchEnter before the
// kernel runs, the kernel body, OnLaunch after it. Struct parameters holding
// pointers (at::detail::Array<char*, N>, TensorListMetadata, cuBLAS-style
// parameter blocks) are passed as raw bytes, as the driver sees them.
//
// Example:
//   SimLauncher launch(&engine, /*stream=*/7);
//   launch.Kernel("ampere_sgemm_64x32_sliced1x4_nn", {128, 1, 1}, {256, 1, 1})
//       .Param(gemm_params)          // a struct with three pointers
//       .Run([&] { Gemm(...); });    // ENTER, body, EXIT
#ifndef NUMTRACE_SIM_SIM_LAUNCHER_H_
#define NUMTRACE_SIM_SIM_LAUNCHER_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "shim/engine/event_sink.h"

namespace numtrace::sim {

class SimLauncher {
 public:
  class Launch {
   public:
    template <typename T>
    Launch& Param(const T& value) {
      static_assert(std::is_trivially_copyable_v<T>);
      size_t offset = (bytes_.size() + alignof(T) - 1) / alignof(T) * alignof(T);
      bytes_.resize(offset + sizeof(T));
      std::memcpy(bytes_.data() + offset, &value, sizeof(T));
      layout_.push_back({static_cast<uint32_t>(offset), static_cast<uint32_t>(sizeof(T))});
      return *this;
    }
    // Runs ENTER -> body -> EXIT. The body is the kernel; on a GPU it would
    // run after the launch returns, but stream order makes the measurements
    // see the same bytes either way.
    void Run(const std::function<void()>& body);

   private:
    friend class SimLauncher;
    Launch(SimLauncher* owner, std::string name, std::array<uint32_t, 3> grid,
           std::array<uint32_t, 3> block)
        : owner_(owner), name_(std::move(name)), grid_(grid), block_(block) {}
    SimLauncher* owner_;
    std::string name_;
    std::array<uint32_t, 3> grid_, block_;
    std::vector<uint8_t> bytes_;
    std::vector<shim::ParamSlot> layout_;
  };

  // kill_after_launches > 0: the process SIGKILLs itself right after that
  // many launches, to leave a trace cut mid-capture as a killed job would.
  SimLauncher(shim::EventSink* sink, uint64_t stream, int64_t kill_after_launches = -1)
      : sink_(sink), stream_(stream), kill_after_(kill_after_launches) {}
  Launch Kernel(std::string name, std::array<uint32_t, 3> grid, std::array<uint32_t, 3> block) {
    return Launch(this, std::move(name), grid, block);
  }

 private:
  shim::EventSink* sink_;
  uint64_t stream_;
  int64_t kill_after_;
  int64_t launches_ = 0;
};

}  // namespace numtrace::sim

#endif  // NUMTRACE_SIM_SIM_LAUNCHER_H_

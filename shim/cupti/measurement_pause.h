// File: shim/cupti/measurement_pause.h
//
// Measurement paused on this thread (numtrace_pause/numtrace_resume, which
// the PyTorch hooks call around Inductor's and Triton's benchmarking). The
// reductions run on the user's stream and slow what an autotuner times:
// measured, a benchmark may pick another config, and `numtrace twice` would
// report a divergence numtrace caused. The number of launches a benchmark
// makes also depends on its timings, so paused launches are not even
// counted: the switchboard drops them whole (footer launches_paused) and
// notes their correlation ids for the activity check, so their kernels do
// not read as unmeasured. Per thread, nesting: a benchmark runs its
// launches on the thread that asked for it, and other threads' launches go
// on being measured. Allocations are still tracked while paused.
// Free of CUDA headers (the C API uses it).
//
// Example:
//   MeasurementPause::Push();  ... benchmark ...  MeasurementPause::Pop();
#ifndef NUMTRACE_SHIM_CUPTI_MEASUREMENT_PAUSE_H_
#define NUMTRACE_SHIM_CUPTI_MEASUREMENT_PAUSE_H_

namespace numtrace::shim {

class MeasurementPause {
 public:
  static void Push() { ++depth_; }
  // A resume without a pause is ignored (never goes below zero).
  static void Pop() {
    if (depth_ > 0) --depth_;
  }
  static bool Active() { return depth_ > 0; }

 private:
  static inline thread_local int depth_ = 0;
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_CUPTI_MEASUREMENT_PAUSE_H_

// File: sim/null_sink.h
//
// An event sink that sees nothing: the loop runs untouched, as a job does
// without capture (sim_run.cc when the settings are bad) or as the other
// ranks' replicas of --dp do, whose launches this process must not record.
//
// Example:
//   NullSink none;
//   TrainMlp(options, &none);
#ifndef NUMTRACE_SIM_NULL_SINK_H_
#define NUMTRACE_SIM_NULL_SINK_H_

#include <string_view>

#include "shim/engine/event_sink.h"

namespace numtrace::sim {

class NullSink final : public shim::EventSink {
 public:
  void OnLaunch(const shim::LaunchEvent&) override {}
  void OnAlloc(const shim::AllocEvent&) override {}
  void OnFree(const shim::FreeEvent&) override {}
  void OnGraphLaunch(const shim::GraphLaunchEvent&) override {}
  void OnStepMark() override {}
  void OnCaptureBegin() override {}
  void OnCaptureEnd() override {}
  void OnProfilerStart() override {}
  void OnProfilerStop() override {}
  void OnRangePush(std::string_view) override {}
  void OnRangePop() override {}
  void Shutdown() override {}
};

}  // namespace numtrace::sim

#endif  // NUMTRACE_SIM_NULL_SINK_H_

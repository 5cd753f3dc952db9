// File: shim/engine/null_sink.h
//
// An event sink that sees nothing, and the base of sinks that keep only a
// few events (a test's recorder, a benchmark's counter): they override what
// they keep, so a new event on EventSink is added here once. The simulated
// loop uses it as a job runs without capture (sim_run.cc when the settings
// are bad) and for the other ranks' replicas of --dp, whose launches this
// process must not record.
//
// Example:
//   NullSink none;
//   TrainMlp(options, &none);
//   class Counting : public NullSink { void OnLaunch(const LaunchEvent&) override { ++n; } int n = 0; };
#ifndef NUMTRACE_SHIM_ENGINE_NULL_SINK_H_
#define NUMTRACE_SHIM_ENGINE_NULL_SINK_H_

#include <string_view>

#include "shim/engine/event_sink.h"

namespace numtrace::shim {

class NullSink : public EventSink {
 public:
  void OnLaunch(const LaunchEvent&) override {}
  void OnAlloc(const AllocEvent&) override {}
  void OnFree(const FreeEvent&) override {}
  void OnGraphLaunch(const GraphLaunchEvent&) override {}
  void OnStepMark() override {}
  void OnCaptureBegin() override {}
  void OnCaptureEnd() override {}
  void OnProfilerStart() override {}
  void OnProfilerStop() override {}
  void OnRangePush(std::string_view) override {}
  void OnRangePop() override {}
  void Shutdown() override {}
};

}  // namespace numtrace::shim

#endif  // NUMTRACE_SHIM_ENGINE_NULL_SINK_H_

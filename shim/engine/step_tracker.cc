#include "shim/engine/step_tracker.h"

#include "common/settings/modes.h"

namespace numtrace::shim {

using settings::StepMode;

StepTracker::StepTracker(const settings::Config& config) : config_(config) {
  // Mark mode starts in step 0; range modes and kernel mode start outside any step.
  if (config_.step_mode == StepMode::kMark) SetStep(0);
  if (config_.step_mode == StepMode::kLaunches) SetStep(0);
}

void StepTracker::SetStep(int64_t step) {
  selected_.store(step >= 0 && config_.steps.Contains(step), std::memory_order_relaxed);
  step_.store(step, std::memory_order_relaxed);
}

LaunchDecision StepTracker::Decide(bool starts_step) {
  LaunchDecision d;
  switch (config_.step_mode) {
    case StepMode::kLaunches:
      d.step = static_cast<int64_t>(launches_.load(std::memory_order_relaxed) /
                                    config_.launches_per_step);
      d.selected = config_.steps.Contains(d.step);
      return d;
    case StepMode::kKernel:
      if (starts_step) {
        const int64_t step = kernel_steps_.fetch_add(1, std::memory_order_relaxed);
        SetStep(step);
        d.step = step;
        d.selected = config_.steps.Contains(step);
        return d;
      }
      break;
    default:
      break;
  }
  d.step = step_.load(std::memory_order_relaxed);
  d.selected = selected_.load(std::memory_order_relaxed);
  return d;
}

LaunchDecision StepTracker::Count(LaunchDecision d) {
  d.launch = launches_.fetch_add(1, std::memory_order_relaxed);
  if (config_.step_mode == StepMode::kLaunches) {
    d.step = static_cast<int64_t>(d.launch / config_.launches_per_step);
    d.selected = config_.steps.Contains(d.step);
  }
  return d;
}

bool StepTracker::TakeWindowSlot() {
  const uint64_t i = window_seen_.fetch_add(1, std::memory_order_relaxed);
  if (i < config_.launch_skip) return false;
  return !config_.launch_count || i - config_.launch_skip < *config_.launch_count;
}

bool StepTracker::Quiet() const {
  if (finished()) return true;
  switch (config_.step_mode) {
    case StepMode::kLaunches: {
      const uint64_t l = launches();
      return !IsSelected(static_cast<int64_t>(l / config_.launches_per_step)) &&
             !IsSelected(static_cast<int64_t>((l + 1) / config_.launches_per_step));
    }
    case StepMode::kKernel: {
      const int64_t next = kernel_steps_.load(std::memory_order_relaxed);
      return !selected_.load(std::memory_order_relaxed) && !IsSelected(next);
    }
    default:
      return !selected_.load(std::memory_order_relaxed);
  }
}

bool StepTracker::finished() const {
  if (config_.launch_count &&
      window_seen_.load(std::memory_order_relaxed) >= config_.launch_skip + *config_.launch_count) {
    return true;
  }
  const int64_t step = step_.load(std::memory_order_relaxed);
  if (config_.step_mode == StepMode::kLaunches) {
    return static_cast<int64_t>(launches() / config_.launches_per_step) > config_.steps.Last();
  }
  return step > config_.steps.Last() ||
         (step < 0 && config_.step_mode != StepMode::kMark && ranges_seen_.load(std::memory_order_relaxed) > config_.steps.Last());
}

StepTracker::Mark StepTracker::OnStepMark(int64_t next) {
  if (config_.step_mode != StepMode::kMark) return {};
  std::lock_guard<std::mutex> lock(mu_);
  Mark m;
  m.ended = m.ended_as = step_.load(std::memory_order_relaxed);
  if (next <= m.ended) next = m.ended + 1;
  if (next - 1 > m.ended && !selected_.load(std::memory_order_relaxed)) m.ended_as = next - 1;
  SetStep(next);
  return m;
}

int64_t StepTracker::BeginRange() {
  if (in_range_) return -1;  // nested begin: the outer range goes on
  in_range_ = true;
  SetStep(ranges_seen_.fetch_add(1, std::memory_order_relaxed));
  return -1;
}

int64_t StepTracker::EndRange() {
  if (!in_range_) return -1;
  in_range_ = false;
  const int64_t ended = step_.load(std::memory_order_relaxed);
  SetStep(-1);
  return ended;
}

int64_t StepTracker::OnCaptureBegin() {
  if (config_.step_mode != StepMode::kApi) return -1;
  std::lock_guard<std::mutex> lock(mu_);
  return BeginRange();
}

int64_t StepTracker::OnCaptureEnd() {
  if (config_.step_mode != StepMode::kApi) return -1;
  std::lock_guard<std::mutex> lock(mu_);
  return EndRange();
}

int64_t StepTracker::OnProfilerStart() {
  if (config_.step_mode != StepMode::kProfiler) return -1;
  std::lock_guard<std::mutex> lock(mu_);
  return BeginRange();
}

int64_t StepTracker::OnProfilerStop() {
  if (config_.step_mode != StepMode::kProfiler) return -1;
  std::lock_guard<std::mutex> lock(mu_);
  return EndRange();
}

int64_t StepTracker::OnRangePush(std::string_view name) {
  if (config_.step_mode != StepMode::kNvtx) return -1;
  std::lock_guard<std::mutex> lock(mu_);
  ++nvtx_depth_;
  if (!in_range_ && config_.step_regex.Search(name)) {
    nvtx_open_depth_ = nvtx_depth_;
    return BeginRange();
  }
  return -1;
}

int64_t StepTracker::OnRangePop() {
  if (config_.step_mode != StepMode::kNvtx) return -1;
  std::lock_guard<std::mutex> lock(mu_);
  int64_t ended = -1;
  if (in_range_ && nvtx_depth_ == nvtx_open_depth_) {
    ended = EndRange();
    nvtx_open_depth_ = -1;
  }
  if (nvtx_depth_ > 0) --nvtx_depth_;
  return ended;
}

}  // namespace numtrace::shim

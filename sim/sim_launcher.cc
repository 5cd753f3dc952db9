#include "sim/sim_launcher.h"

#include <chrono>
#include <csignal>
#include <functional>
#include <thread>

namespace numtrace::sim {

void SimLauncher::Launch::Run(const std::function<void()>& body) {
  shim::LaunchEvent e;
  e.symbol = name_;
  // A stable per-kernel handle, as a CUfunction would be.
  e.function = std::hash<std::string>{}(name_) | 1;
  e.params = bytes_;
  e.layout = layout_;
  e.grid = grid_;
  e.block = block_;
  e.stream = owner_->stream_;
  e.context = 1;
  owner_->sink_->OnLaunchEnter(e);
  body();
  owner_->sink_->OnLaunch(e);
  if (++owner_->launches_ == owner_->kill_after_) {
    // A real job runs on for a while between launches; give the writer
    // thread that time, then die as a killed job does: no exit handlers.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::raise(SIGKILL);
  }
}

}  // namespace numtrace::sim

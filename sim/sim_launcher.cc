#include "sim/sim_launcher.h"

#include <functional>

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
}

}  // namespace numtrace::sim

// File: shim/cupti/kernel_activity_check.cc
//
// Matching kernel activity records to seen launches; see kernel_activity_check.h.
#include "shim/cupti/kernel_activity_check.h"

#include <algorithm>
#include <map>
#include <utility>

namespace numtrace::shim {

void KernelActivityCheck::NoteLaunch(uint32_t correlation) {
  std::lock_guard<std::mutex> lock(mu_);
  seen_.insert(correlation);
}

void KernelActivityCheck::OnKernel(uint32_t correlation, std::string_view name, bool in_graph) {
  if (!own_kernel_.empty() && name == own_kernel_) return;
  std::lock_guard<std::mutex> lock(mu_);
  records_.push_back({correlation, in_graph, std::string(name)});
}

std::vector<KernelActivityCheck::Unmeasured> KernelActivityCheck::Settle() {
  std::map<std::pair<std::string, bool>, uint64_t> counts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Record& r : records_) {
      // Graph kernels carry the graph launch's correlation id, which the
      // switchboard saw as a graph launch, never as this kernel's launch.
      if (!r.in_graph && seen_.count(r.correlation) != 0) continue;
      ++counts[{r.name.empty() ? std::string("(unnamed kernel)") : r.name, r.in_graph}];
    }
    records_.clear();
  }
  std::vector<Unmeasured> out;
  out.reserve(counts.size());
  for (auto& [key, n] : counts) out.push_back({key.first, n, key.second});
  return out;
}

uint64_t KernelActivityCheck::launches_noted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_.size();
}

}  // namespace numtrace::shim

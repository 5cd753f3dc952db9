// File: shim/driver/check.cc
//
// Failure logging for NUMTRACE_CU_CHECK; see check.h.
#include "shim/driver/check.h"

#include <atomic>

#include "shim/driver/driver_api.h"
#include "shim/log/log.h"

namespace numtrace::shim {
namespace {

constexpr int kMaxFailureLines = 20;
std::atomic<int> g_failure_lines{0};

}  // namespace

bool MayLogCallFailure() {
  int n = g_failure_lines.fetch_add(1, std::memory_order_relaxed);
  if (n == kMaxFailureLines) log::Warn("further CUDA/CUPTI failures are not logged");
  return n < kMaxFailureLines;
}

bool CheckDriverResult(int code, const char* call, const char* file, int line) {
  if (code == 0) return true;
  if (!MayLogCallFailure()) return false;
  const char* what = nullptr;
  DriverApi& api = DriverApi::Instance();
  if (api.loaded()) api.cuGetErrorString(static_cast<CUresult>(code), &what);
  log::Warn("{} failed: {} ({}) [{}:{}]", call, what ? what : "unknown driver error", code, file,
            line);
  return false;
}

}  // namespace numtrace::shim

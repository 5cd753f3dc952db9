// File: shim/cupti/check.cc
//
// Failure logging for the checked-call macros; see check.h.
#include "shim/cupti/check.h"

#include <atomic>

#include "shim/cupti/cupti_api.h"
#include "shim/cupti/driver_api.h"
#include "shim/log/log.h"

namespace numtrace::shim {
namespace {

constexpr int kMaxFailureLines = 20;
std::atomic<int> g_failure_lines{0};

bool MayLog() {
  int n = g_failure_lines.fetch_add(1, std::memory_order_relaxed);
  if (n == kMaxFailureLines) log::Warn("further CUDA/CUPTI failures are not logged");
  return n < kMaxFailureLines;
}

}  // namespace

bool CheckCuptiResult(int code, const char* call, const char* file, int line) {
  if (code == 0) return true;
  if (!MayLog()) return false;
  const char* what = "unknown CUPTI error";
  CuptiApi& api = CuptiApi::Instance();
  if (api.loaded()) api.cuptiGetResultString(static_cast<CUptiResult>(code), &what);
  log::Warn("{} failed: {} ({}) [{}:{}]", call, what, code, file, line);
  return false;
}

bool CheckDriverResult(int code, const char* call, const char* file, int line) {
  if (code == 0) return true;
  if (!MayLog()) return false;
  const char* what = nullptr;
  DriverApi& api = DriverApi::Instance();
  if (api.loaded()) api.cuGetErrorString(static_cast<CUresult>(code), &what);
  log::Warn("{} failed: {} ({}) [{}:{}]", call, what ? what : "unknown driver error", code, file,
            line);
  return false;
}

}  // namespace numtrace::shim

// File: common/settings/torch_alloc_conf.h
//
// PyTorch's own allocator setting as a job gives it, read in one place: the
// shim looks for backend:cudaMallocAsync (buffers then have one allocation
// per tensor) and `numtrace run --allocator` decides whether to set it
// (NUMTRACE_ALLOCATOR, modes.h). Current torch reads PYTORCH_ALLOC_CONF
// first and the older PYTORCH_CUDA_ALLOC_CONF after it, so this does too.
//
// Example:
//   TorchAllocConf t = FindTorchAllocConf([](const char* n) { return std::getenv(n); });
//   if (t.cuda_malloc_async()) ...   // t.name says which variable held it
#ifndef NUMTRACE_COMMON_SETTINGS_TORCH_ALLOC_CONF_H_
#define NUMTRACE_COMMON_SETTINGS_TORCH_ALLOC_CONF_H_

#include <string>

#include "common/settings/config.h"  // GetEnvFn

namespace numtrace::settings {

// PYTORCH_ALLOC_CONF when set and not empty, else PYTORCH_CUDA_ALLOC_CONF.
// Empty `name` when neither is set.
struct TorchAllocConf {
  std::string name;   // the variable that holds it
  std::string value;
  bool cuda_malloc_async() const { return value.find("cudaMallocAsync") != std::string::npos; }
};
TorchAllocConf FindTorchAllocConf(const GetEnvFn& getenv);

}  // namespace numtrace::settings

#endif  // NUMTRACE_COMMON_SETTINGS_TORCH_ALLOC_CONF_H_

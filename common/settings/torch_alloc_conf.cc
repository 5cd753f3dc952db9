#include "common/settings/torch_alloc_conf.h"

namespace numtrace::settings {

TorchAllocConf FindTorchAllocConf(const GetEnvFn& getenv) {
  for (const char* name : {"PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"}) {
    const char* v = getenv(name);
    if (v != nullptr && *v != '\0') return {name, v};
  }
  return {};
}

}  // namespace numtrace::settings

#include "launcher/run_environment.h"

#include <algorithm>
#include <fstream>
#include <iterator>

namespace numtrace::launcher {
namespace {

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A script that starts Python somewhere (torchtitan's run_train.sh calls
// torchrun). Only files given by path are read: a bare name is a program.
bool ScriptMentionsPython(const std::string& path) {
  if (path.find('/') == std::string::npos) return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string head(64 * 1024, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (head.find('\0') != std::string::npos) return false;  // a binary
  return head.find("python") != std::string::npos || head.find("torchrun") != std::string::npos;
}

}  // namespace

bool LooksLikePython(const std::vector<std::string>& command) {
  if (command.empty()) return false;
  const std::string program = Basename(command[0]);
  if (program == "env") {  // env [-i] [NAME=value]... PROGRAM ARGS...
    size_t i = 1;
    while (i < command.size() && (command[i].find('=') != std::string::npos || command[i].rfind("-", 0) == 0)) ++i;
    return LooksLikePython(std::vector<std::string>(command.begin() + static_cast<long>(std::min(i, command.size())),
                                                    command.end()));
  }
  for (const char* p : {"python", "torchrun", "accelerate", "deepspeed", "pytest"}) {
    if (program.rfind(p, 0) == 0) return true;
  }
  if (EndsWith(program, ".py")) return true;
  return ScriptMentionsPython(command[0]);
}

Environment RunEnvironment(const RunOptions& o, const std::string& output_dir_absolute,
                           const Environment& base, const InstallLayout& layout,
                           std::vector<std::string>* warnings) {
  Environment env = base;
  env.Set("NUMTRACE_OUTPUT_DIR", output_dir_absolute);
  const std::pair<const std::string*, const char*> settings[] = {
      {&o.steps, "NUMTRACE_STEPS"},
      {&o.step_mark, "NUMTRACE_STEP_MODE"},
      {&o.kernel_name, "NUMTRACE_KERNEL"},
      {&o.kernel_exclude, "NUMTRACE_KERNEL_EXCLUDE"},
      {&o.launch_skip, "NUMTRACE_LAUNCH_SKIP"},
      {&o.launch_count, "NUMTRACE_LAUNCH_COUNT"},
      {&o.outputs, "NUMTRACE_OUTPUTS"},
      {&o.label, "NUMTRACE_LABEL"},
      {&o.watch, "NUMTRACE_WATCH"},
      {&o.dump, "NUMTRACE_DUMP"},
      {&o.dump_dir, "NUMTRACE_DUMP_DIR"},
      {&o.dump_expect, "NUMTRACE_DUMP_EXPECT"},
  };
  for (const auto& [value, name] : settings) {
    if (!value->empty()) env.Set(name, *value);
  }

  const std::string* alloc = base.Find("PYTORCH_CUDA_ALLOC_CONF");
  if (alloc == nullptr || alloc->empty()) {
    env.Set("PYTORCH_CUDA_ALLOC_CONF", kAllocatorSetting);
  } else if (alloc->find("cudaMallocAsync") == std::string::npos) {
    warnings->push_back("PYTORCH_CUDA_ALLOC_CONF=" + *alloc +
                        " kept: buffers will be caching-allocator segments, not tensors (" +
                        kAllocatorSetting + " measures tensors)");
  }

  const bool hooks = !o.no_torch_hooks && (o.torch_hooks || LooksLikePython(o.command));
  if (hooks) {
    env.Prepend("PYTHONPATH", layout.hooks_dir);
    env.Set("NUMTRACE_LIB_PATH", layout.library);
  }
  if (o.injection) {
    env.Set("CUDA_INJECTION64_PATH", layout.library);
  } else {
    env.Prepend("LD_PRELOAD", layout.library);
  }
  return env;
}

}  // namespace numtrace::launcher

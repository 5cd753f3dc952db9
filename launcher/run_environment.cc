#include "launcher/run_environment.h"

#include <algorithm>
#include <fstream>
#include <iterator>

#include "common/settings/config.h"
#include "common/settings/settings.h"
#include "common/settings/torch_alloc_conf.h"
#include "common/text/one_line.h"
#include "common/text/trim.h"

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

AllocatorChoice ChooseAllocator(const Environment& env, bool hooks) {
  AllocatorChoice c;
  c.mode = settings::ParseAllocatorMode(env.Get("NUMTRACE_ALLOCATOR")).value_or(settings::AllocatorMode::kCaching);
  const settings::TorchAllocConf conf = settings::FindTorchAllocConf([&env](const char* name) -> const char* {
    const std::string* v = env.Find(name);
    return v == nullptr ? nullptr : v->c_str();
  });
  const bool user_conf = !conf.name.empty();
  const bool user_async = user_conf && conf.cuda_malloc_async();
  const std::string yours = user_conf ? "your " + conf.name + "=" + conf.value : std::string();
  if (c.mode == settings::AllocatorMode::kAsync) {
    if (!user_conf) {
      c.set_async_conf = true;
      c.line = std::string("allocator async: PYTORCH_CUDA_ALLOC_CONF=") + kAllocatorSetting +
               " set (one driver allocation per tensor; PyTorch refuses it for CUDA graph trees, "
               "torch.cuda.MemPool and symmetric memory: use --allocator caching there)";
    } else if (user_async) {
      c.line = "allocator async: " + yours + " kept (one driver allocation per tensor)";
    } else {
      c.tensors = false;
      c.line = "allocator async: " + yours +
               " kept: buffers will be caching-allocator segments, not tensors (unset it, or use --allocator "
               "caching)";
    }
    return c;
  }
  if (user_async) {
    c.line = "allocator caching: " + yours + " kept (one driver allocation per tensor already)";
  } else if (!hooks) {
    // A job that is not Python has no PyTorch allocator to speak of.
    c.tensors = !user_conf;
    if (user_conf) {
      c.line = "allocator caching: " + yours +
               " kept, but without the PyTorch hooks (--torch-hooks) buffers are whole allocator segments";
    }
  } else {
    c.tensor_map = true;
    c.cuda_only = true;
    c.line = "allocator caching: PyTorch's allocator is left as it is" + (user_conf ? " (" + yours + ")" : "") +
             "; the hooks report each tensor from its trace (--allocator async sets backend:cudaMallocAsync "
             "instead)";
  }
  return c;
}

namespace {
bool HooksFor(const RunOptions& o) { return !o.no_torch_hooks && (o.torch_hooks || LooksLikePython(o.command)); }
}  // namespace

bool OpsLevel(const Environment& job) {
  const std::string* level = job.Find("NUMTRACE_LEVEL");
  return level != nullptr && Trim(*level) == "ops";
}

std::string AllocatorLineForCudaJob(const Environment& job, const RunOptions& o) {
  if (OpsLevel(job)) return "";
  const AllocatorChoice allocator = ChooseAllocator(job, HooksFor(o));
  return allocator.cuda_only ? allocator.line : "";
}

Environment RunEnvironment(const RunOptions& o, const std::string& output_dir_absolute,
                           const Environment& base, const InstallLayout& layout,
                           std::vector<std::string>* warnings) {
  Environment env = base;
  // Every option given, as typed (empty too: the validation judges it).
  for (const auto& [variable, value] : o.settings) env.Set(variable, value);
  env.Set(kOutputDirVariable, output_dir_absolute);

  const bool hooks = HooksFor(o);
  const AllocatorChoice allocator = ChooseAllocator(env, hooks);
  if (allocator.set_async_conf) env.Set("PYTORCH_CUDA_ALLOC_CONF", kAllocatorSetting);
  if (!allocator.line.empty() && !allocator.cuda_only && !OpsLevel(env)) warnings->push_back(allocator.line);
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

namespace {

// Edits (insert, delete, replace one character) from `a` to `b`.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// A NUMTRACE_* variable that is no setting but one or two edits from one
// (NUMTRACE_STEP for NUMTRACE_STEPS) is most likely a typo the shim would
// ignore. Only near misses are said: numtrace's other variables
// (NUMTRACE_HOOKS_LOG, NUMTRACE_LIB_PATH, ...) are not settings either.
void WarnMistypedSettings(const Environment& job, std::vector<std::string>* warnings) {
  for (const auto& [name, value] : job.vars()) {
    if (!name.starts_with("NUMTRACE_") || settings::FindSetting(name) != nullptr) continue;
    for (const settings::Setting& s : settings::Settings()) {
      if (EditDistance(name, s.variable) <= 2) {
        warnings->push_back(name + " in the environment is not a numtrace setting and is ignored: did you mean " +
                            std::string(s.variable) + "?");
        break;
      }
    }
  }
}

}  // namespace

absl::Status ValidateJobSettings(const Environment& job, const RunOptions& o,
                                 std::vector<std::string>* warnings) {
  WarnMistypedSettings(job, warnings);
  if (!job.Get("NUMTRACE_HOOKS_LOG").empty() && !HooksFor(o)) {
    warnings->push_back(std::string(o.no_torch_hooks ? "--no-torch-hooks" : "the command does not look like Python") +
                        ": the PyTorch hooks are not on this job's path, so no hooks log is written" +
                        (o.no_torch_hooks ? "" : " (--torch-hooks puts them there)"));
  }
  std::string line;
  settings::SettingError bad;
  auto config = settings::ParseConfig(
      [&job](const char* name) -> const char* {
        const std::string* v = job.Find(name);
        return v == nullptr ? nullptr : v->c_str();
      },
      &line, &bad);
  if (!config) {
    const std::string variable(bad.setting != nullptr ? bad.setting->variable : "");
    auto typed = o.typed_as.find(variable);
    if (typed != o.typed_as.end()) return absl::InvalidArgumentError(bad.LineFor(typed->second));
    return absl::InvalidArgumentError(bad.LineFor(variable + " (in the environment)") +
                                      "; fix or unset it");
  }
  if (!config->enabled) {
    warnings->push_back("NUMTRACE_ENABLE=" + OneLine(job.Get("NUMTRACE_ENABLE"), 200) +
                        " in the environment: the job runs without capture and writes no trace");
  }
  return absl::OkStatus();
}

}  // namespace numtrace::launcher

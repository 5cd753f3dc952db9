#include "launcher/job_environment.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "analyzer/read/importer.h"

namespace numtrace::launcher {
namespace {

int64_t Positive(const std::string& s) {
  if (s.empty()) return 0;
  char* end = nullptr;
  const long long n = std::strtoll(s.c_str(), &end, 10);
  return *end == '\0' && n > 0 ? n : 0;
}

}  // namespace

EnvironmentValues RecordedVariables(const Environment& env) {
  EnvironmentValues out;
  for (const auto& [name, value] : env.vars()) {
    if (IsRecordedVariable(name)) out.emplace_back(std::string(kEnvVariablePrefix) + name, value);
  }
  return out;
}

int64_t JobWorldSize(const Environment& env, const std::vector<std::string>& command) {
  for (const char* name : {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE"}) {
    if (const int64_t n = Positive(env.Get(name)); n > 0) return n;
  }
  for (size_t i = 0; i < command.size(); ++i) {
    for (const std::string flag : {"--nproc-per-node", "--nproc_per_node"}) {
      if (command[i] == flag && i + 1 < command.size()) {
        if (const int64_t n = Positive(command[i + 1]); n > 0) return n;
      } else if (command[i].rfind(flag + "=", 0) == 0) {
        if (const int64_t n = Positive(command[i].substr(flag.size() + 1)); n > 0) return n;
      }
    }
  }
  return 1;
}

EnvironmentValues TraceEnvironmentIn(const std::string& dir) {
  std::vector<std::string> traces;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 13 && name.compare(name.size() - 13, 13, ".ntrace.jsonl") == 0) {
      traces.push_back(entry.path().string());
    }
  }
  std::sort(traces.begin(), traces.end());
  for (const std::string& path : traces) {
    absl::StatusOr<analyzer::Trace> t = analyzer::ReadTrace(path, analyzer::FindImporter("numtrace"));
    if (t.ok() && !t->header.environment.empty()) return t->header.environment;
  }
  return {};
}

const RunToRunRisk* LikelyCause(const std::vector<RunToRunRisk>& risks, const std::string& name) {
  for (const RunToRunRisk& r : risks) {
    const EnvironmentKey* k = FindEnvironmentKey(r.key);
    if (k != nullptr && EnvironmentAffectsLaunch(k->affects, name, "")) return &r;
  }
  return nullptr;
}

}  // namespace numtrace::launcher

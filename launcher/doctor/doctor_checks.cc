#include "launcher/doctor/doctor_checks.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "launcher/job_environment.h"
#include "launcher/run_environment.h"
#include "re2/re2.h"
#include "common/settings/config.h"
#include "common/settings/settings.h"
#include "common/settings/value_parsers.h"
#include "common/text/one_line.h"

namespace numtrace::launcher {
namespace {

namespace fs = std::filesystem;

std::string CudaVersion(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// CUresult values worth a word; the rest are printed as numbers.
std::string CuInitMeaning(int r) {
  switch (r) {
    case 100: return "no CUDA-capable device is detected";
    case 35: return "the driver is older than the CUDA runtime it was asked for";
    case 3: return "the driver could not initialise (CUDA_ERROR_NOT_INITIALIZED)";
    case 999: return "unknown driver error";
    default: return "CUresult " + std::to_string(r);
  }
}

CheckRow OutputDirRow(const std::string& dir) {
  CheckRow row{"output directory", CheckStatus::kOk, "", ""};
  std::error_code ec;
  fs::path p = fs::absolute(dir.empty() ? "." : dir, ec);
  // The directory itself, or the nearest parent that exists (run creates the rest).
  fs::path probe = p;
  while (!probe.empty() && !fs::exists(probe, ec)) probe = probe.parent_path();
  if (!probe.empty() && !fs::is_directory(probe, ec)) {
    // `-o /dev/null`, `-o notes.txt`, or a path through a file.
    row.status = CheckStatus::kFail;
    row.found = probe.string() + " exists and is not a directory" +
                (probe == p ? "" : " (" + p.string() + " would have to be made inside it)");
    row.fix = "choose another -o DIR: the traces go into a directory";
    return row;
  }
  if (probe.empty()) {
    row.status = CheckStatus::kFail;
    row.found = p.string() + ": no existing parent directory";
    row.fix = "choose another -o DIR";
    return row;
  }
  fs::path test = probe / (".numtrace-doctor." + std::to_string(getpid()));
  {
    std::ofstream f(test);
    f << "x";
    if (!f) {
      row.status = CheckStatus::kFail;
      row.found = probe.string() + " is not writable";
      row.fix = "choose a writable -o DIR (traces need room: about 1 KB per captured launch)";
      return row;
    }
  }
  fs::remove(test, ec);
  row.found = p.string() + (probe == p ? " is writable" : " can be created in " + probe.string());
  return row;
}

// The NUMTRACE_* settings already in the environment, judged by the shim's
// own parser: a bad one leaves the shim off in every job; NUMTRACE_ENABLE=0
// switches it off silently.
// The settings in this environment that decide whether two runs of a job
// can match bit for bit (common/format/environment.h, RunToRunRisks), and
// what a trace will record of them. Never required: a job may not care.
void DeterminismRows(const Environment& env, std::vector<CheckRow>* rows) {
  const EnvironmentValues vars = RecordedVariables(env);
  const int64_t world = JobWorldSize(env, {});
  const std::vector<RunToRunRisk> risks = RunToRunRisks(vars, /*cuda=*/true, std::max<int64_t>(world, 2));
  auto risk = [&](std::string_view key) -> const RunToRunRisk* {
    for (const RunToRunRisk& r : risks) {
      if (r.key == key) return &r;
    }
    return nullptr;
  };
  const std::string* ws = env.Find("CUBLAS_WORKSPACE_CONFIG");
  if (const RunToRunRisk* r = risk("env.CUBLAS_WORKSPACE_CONFIG")) {
    rows->push_back({"CUBLAS_WORKSPACE_CONFIG", CheckStatus::kWarn, r->why,
                     "export CUBLAS_WORKSPACE_CONFIG=:4096:8 for run-to-run identical GEMMs", false});
  } else {
    rows->push_back({"CUBLAS_WORKSPACE_CONFIG", CheckStatus::kOk, *ws + ": cuBLAS reduces the same way every run", "",
                     false});
  }
  const std::string* algo = env.Find("NCCL_ALGO");
  if (algo != nullptr) {
    rows->push_back({"NCCL_ALGO", CheckStatus::kOk, "pinned to " + *algo, "", false});
  } else {
    rows->push_back({"NCCL_ALGO", world > 1 ? CheckStatus::kWarn : CheckStatus::kOk,
                     "unset: matters with several ranks (NCCL may pick another all-reduce algorithm)",
                     world > 1 ? "export NCCL_ALGO=Ring (or Tree) for run-to-run identical all-reduces" : "", false});
  }
  std::string listed;
  for (const auto& [key, value] : vars) listed += (listed.empty() ? "" : ", ") + key.substr(kEnvVariablePrefix.size()) + "=" + value;
  rows->push_back({"settings recorded", CheckStatus::kOk,
                   (listed.empty() ? std::string("no variable that changes numbers is set") : listed) +
                       "; torch's settings (TF32, deterministic algorithms, cudnn.benchmark) are recorded per "
                       "job by the hooks: numtrace show TRACE --env",
                   "", false});
}

CheckRow SettingsRow(const Environment& env) {
  CheckRow row{"NUMTRACE_* settings", CheckStatus::kOk, "", ""};
  std::string line;
  settings::SettingError bad;
  auto config = settings::ParseConfig(
      [&env](const char* name) -> const char* {
        const std::string* v = env.Find(name);
        return v == nullptr ? nullptr : v->c_str();
      },
      &line, &bad);
  std::vector<std::string> set;
  for (const settings::Setting& s : settings::Settings()) {
    if (env.Find(std::string(s.variable)) != nullptr) set.emplace_back(s.variable);
  }
  if (!config) {
    row.status = CheckStatus::kFail;
    row.found = bad.LineFor(std::string(bad.setting != nullptr ? bad.setting->variable : "?") + " (in the environment)");
    row.fix = "fix or unset it: with a bad value numtrace stays off in every job";
    return row;
  }
  if (!config->enabled) {
    row.status = CheckStatus::kWarn;
    row.found = "NUMTRACE_ENABLE=" + OneLine(env.Get("NUMTRACE_ENABLE"), 200) +
                " in the environment: capture is switched off, silently";
    row.fix = "unset NUMTRACE_ENABLE to capture";
    return row;
  }
  if (set.empty()) {
    row.found = "none set in the environment: the defaults apply";
  } else {
    for (const std::string& v : set) row.found += (row.found.empty() ? "" : ", ") + v;
    row.found += " set in the environment, all valid";
  }
  return row;
}

}  // namespace

std::string_view CheckStatusName(CheckStatus s) {
  switch (s) {
    case CheckStatus::kOk: return "ok";
    case CheckStatus::kWarn: return "warn";
    case CheckStatus::kFail: return "FAIL";
    case CheckStatus::kSkip: return "skip";
  }
  return "?";
}

bool ReductionKernelsCover(const std::string& gencode, int major, int minor, std::string* what) {
  static const re2::RE2 kCode("code=\\[?([a-z0-9_,]+)\\]?");
  static const re2::RE2 kArch("(sm|compute)_([0-9]{1,6})[a-z]?");
  bool covered = false;
  std::string list;
  re2::StringPiece rest(gencode);
  std::string codes;
  while (re2::RE2::FindAndConsume(&rest, kCode, &codes)) {
    re2::StringPiece arches(codes);
    std::string kind;
    int n = 0;
    while (re2::RE2::FindAndConsume(&arches, kArch, &kind, &n)) {
      const int m = n / 10, mi = n % 10;
      const bool ptx = kind == "compute";
      list += (list.empty() ? "" : " ") + std::string(ptx ? "compute_" : "sm_") + std::to_string(n);
      if (ptx ? (m < major || (m == major && mi <= minor)) : (m == major && mi <= minor)) covered = true;
    }
  }
  if (what) *what = list.empty() ? "no architecture" : list;
  return covered;
}

DoctorReport RunDoctorChecks(SystemProbe& probe, const DoctorInputs& in) {
  DoctorReport report;
  std::vector<CheckRow>& rows = report.rows;

  LibraryFacts lib = probe.Library(in.layout);
  if (lib.loads) {
    rows.push_back({"libnumtrace.so loads", CheckStatus::kOk,
                    in.layout.library + " (version " + lib.version + ")", ""});
  } else {
    rows.push_back({"libnumtrace.so loads", CheckStatus::kFail, in.layout.library + ": " + lib.error,
                    "reinstall numtrace (the library belongs in ../lib beside bin/numtrace) or set "
                    "NUMTRACE_LIB"});
  }

  DriverFacts drv = probe.Driver();
  bool gpu_ok = false;
  int cc_major = 0, cc_minor = 0;
  if (!drv.found) {
    rows.push_back({"CUDA driver", CheckStatus::kFail, "no CUDA driver: libcuda.so.1 not found (" + drv.error + ")",
                    "capture needs a machine with an NVIDIA GPU and its driver; numtrace diff and "
                    "show work without one"});
    rows.push_back({"GPU", CheckStatus::kSkip, "needs the CUDA driver", ""});
    rows.push_back({"reduction kernels", CheckStatus::kSkip, "needs a GPU", ""});
  } else if (drv.init_result != 0) {
    rows.push_back({"CUDA driver", CheckStatus::kFail,
                    drv.path + ": cuInit failed: " + CuInitMeaning(drv.init_result),
                    "check nvidia-smi, CUDA_VISIBLE_DEVICES and the device files (/dev/nvidia*)"});
    rows.push_back({"GPU", CheckStatus::kSkip, "the driver did not initialise", ""});
    rows.push_back({"reduction kernels", CheckStatus::kSkip, "needs a GPU", ""});
  } else {
    rows.push_back({"CUDA driver", CheckStatus::kOk,
                    drv.path + ", supports CUDA " + CudaVersion(drv.version), ""});
    if (drv.gpus.empty()) {
      rows.push_back({"GPU", CheckStatus::kFail, "the driver sees no GPU",
                      "check CUDA_VISIBLE_DEVICES and nvidia-smi"});
      rows.push_back({"reduction kernels", CheckStatus::kSkip, "needs a GPU", ""});
    } else {
      std::string list;
      for (const GpuFacts& g : drv.gpus) {
        list += (list.empty() ? "" : "; ") + std::to_string(g.index) + ": " + g.name + " (sm_" +
                std::to_string(g.cc_major) + std::to_string(g.cc_minor) + ")";
      }
      rows.push_back({"GPU", CheckStatus::kOk, list, ""});
      gpu_ok = true;
      cc_major = drv.gpus[0].cc_major;
      cc_minor = drv.gpus[0].cc_minor;
      std::string what;
      bool all = true;
      for (const GpuFacts& g : drv.gpus) all = all && ReductionKernelsCover(in.gencode, g.cc_major, g.cc_minor, &what);
      if (all) {
        rows.push_back({"reduction kernels", CheckStatus::kOk, "embedded " + what + ": cover every GPU here", ""});
      } else {
        rows.push_back({"reduction kernels", CheckStatus::kFail,
                        "embedded " + what + ": not sm_" + std::to_string(cc_major) + std::to_string(cc_minor),
                        "rebuild with -DNUMTRACE_CUDA_GENCODE naming this GPU's architecture"});
      }
    }
  }

  CuptiFacts cupti = probe.Cupti(in.env);
  if (cupti.found) {
    rows.push_back({"CUPTI", CheckStatus::kOk,
                    cupti.path + (cupti.version ? " (API version " + std::to_string(cupti.version) + ")" : ""),
                    ""});
  } else {
    rows.push_back({"CUPTI", CheckStatus::kFail, "libcupti not found; tried " + cupti.tried,
                    "set NUMTRACE_CUPTI_LIB to a libcupti.so (the CUDA toolkit's, or PyTorch's in "
                    "site-packages/nvidia/cuda_cupti/lib)"});
  }

  if (gpu_ok && lib.loads && cupti.found) {
    SubscriberFacts sub = probe.Subscriber(in.layout, in.env);
    if (!sub.ran) {
      rows.push_back({"CUPTI subscriber free", CheckStatus::kFail, "the CUDA test child failed: " + sub.message,
                      "CUDA failed under the library: run a small CUDA program with `numtrace run "
                      "-o /tmp/t -- PROGRAM` and read numtrace's stderr line (NUMTRACE_LOG_LEVEL=info)"});
    } else if (sub.held) {
      rows.push_back({"CUPTI subscriber free", CheckStatus::kFail, sub.message,
                      "run without torch.profiler / Nsight / compute-sanitizer (one CUPTI client per "
                      "process); unset CUDA_INJECTION64_PATH if a tool set it"});
    } else {
      rows.push_back({"CUPTI subscriber free", CheckStatus::kOk,
                      "a CUDA child under the library subscribed" +
                          (sub.message.empty() ? std::string() : " (" + sub.message + ")") +
                          "; a torch.profiler started later in a job still records kernels but "
                          "takes numtrace's activity records (numtrace then says so once: "
                          "activity_unavailable = 1, unmeasured kernels uncounted); one started "
                          "before the job's first CUDA work loses its kernel records to numtrace "
                          "(said too; NUMTRACE_ACTIVITY=0 leaves them to the profiler)",
                      ""});
    }
    // Most launches without a parameter layout: kernels are listed with no
    // buffers, a trace of names only. Loud, and it stops capture.
    if (!sub.ran || sub.held || !sub.layouts_known || sub.launches_seen == 0) {
      rows.push_back({"parameter layouts", CheckStatus::kSkip,
                      "the CUDA child's trace said nothing about its launches", "", false});
    } else if (sub.launches_no_layout * 2 > sub.launches_seen) {
      rows.push_back({"parameter layouts", CheckStatus::kFail,
                      std::to_string(sub.launches_no_layout) + " of " + std::to_string(sub.launches_seen) +
                          " launches had no parameter layout: kernels would carry no buffers",
                      "the driver refused cuFuncGetParamInfo/cuKernelGetParamInfo: update the driver "
                      "(CUDA 12.4+), and report it with the footer counters (docs/gpu.md)"});
    } else {
      rows.push_back({"parameter layouts", CheckStatus::kOk,
                      std::to_string(sub.launches_seen - sub.launches_no_layout) + " of " +
                          std::to_string(sub.launches_seen) + " test launches described by the driver",
                      "", false});
    }
  } else {
    rows.push_back({"CUPTI subscriber free", CheckStatus::kSkip,
                    gpu_ok ? "needs the library and CUPTI" : "needs a GPU (starts a CUDA child under the library)",
                    ""});
  }

  rows.push_back(OutputDirRow(in.output_dir));
  rows.push_back(SettingsRow(in.env));
  DeterminismRows(in.env, &rows);

  // As `numtrace run` would choose for a Python job with these settings.
  const AllocatorChoice choice = ChooseAllocator(in.env, /*hooks=*/true);
  CheckRow alloc{"allocator", choice.tensors ? CheckStatus::kOk : CheckStatus::kWarn, choice.line, "", false};
  if (!choice.tensors) alloc.fix = "unset your PyTorch allocator setting, or run with --allocator caching";
  rows.push_back(alloc);

  // Kernel activity records are the one CUPTI feature that runs on CUPTI's
  // own thread and flushes at step ends: the first thing to switch off when
  // a job hangs or stalls under numtrace.
  CheckRow activity{"kernel activity check", CheckStatus::kOk, "", "", false};
  const std::string* act = in.env.Find("NUMTRACE_ACTIVITY");
  if (act != nullptr && !settings::ParseBool(*act).value_or(true)) {
    activity.found = "off (NUMTRACE_ACTIVITY=" + *act + "): kernels that run unmeasured are not counted";
  } else {
    activity.found = "on (counts kernels that run unmeasured); if a job hangs or stalls under numtrace, "
                     "rerun it with NUMTRACE_ACTIVITY=0 first";
  }
  rows.push_back(activity);

  PythonFacts py = probe.Python(in.layout, in.env);
  if (!py.python) {
    // The interpreter tried: NUMTRACE_PYTHON's, else python3.
    const std::string none = "no Python (" + py.interpreter + ")";
    rows.push_back({"torch", CheckStatus::kSkip, none + ": " + py.error, "", false});
    rows.push_back({"triton", CheckStatus::kSkip, none, "", false});
    rows.push_back({"PyTorch hooks attach", CheckStatus::kSkip, none, "", false});
  } else {
    if (py.torch_version.empty()) {
      rows.push_back({"torch", CheckStatus::kWarn, py.interpreter + " cannot import torch" +
                                                       (py.torch_error.empty() ? "" : ": " + py.torch_error),
                      "only needed for PyTorch jobs: use the job's own python (NUMTRACE_PYTHON=...)", false});
    } else {
      rows.push_back({"torch", CheckStatus::kOk,
                      py.torch_version + (py.torch_cuda ? ", CUDA available" : ", CUDA NOT available"), "",
                      false});
    }
    rows.push_back({"triton", py.triton_version.empty() ? CheckStatus::kWarn : CheckStatus::kOk,
                    py.triton_version.empty() ? "not importable" : py.triton_version,
                    py.triton_version.empty() ? "only torch.compile needs it" : "", false});
    if (py.torch_version.empty()) {
      rows.push_back({"PyTorch hooks attach", CheckStatus::kSkip, "needs torch", "", false});
    } else if (py.step_hook && (py.triton_version.empty() || py.triton_hook)) {
      rows.push_back({"PyTorch hooks attach", CheckStatus::kOk,
                      std::string("optimizer step hook") + (py.triton_hook ? " and Triton dtype hook" : ""), "",
                      false});
    } else {
      rows.push_back({"PyTorch hooks attach", CheckStatus::kWarn,
                      std::string("step hook ") + (py.step_hook ? "yes" : "no") + ", Triton hook " +
                          (py.triton_hook ? "yes" : "no") + (py.error.empty() ? "" : " (" + py.error + ")"),
                      "mark steps another way: --step-mark profiler|nvtx:RE|launches:N", false});
    }
    // The allocator mode that needs it: the bridge is built in every job.
    if (choice.tensor_map && !py.torch_version.empty()) {
      if (py.bridge.rfind("ok: ", 0) == 0) {
        rows.push_back({"tensor map bridge", CheckStatus::kOk, py.bridge.substr(4), "", false});
      } else {
        rows.push_back({"tensor map bridge", CheckStatus::kWarn,
                        py.bridge.empty() ? "not tried" : py.bridge,
                        "install a C++ compiler (or set CXX) and the CUDA headers, or run with --allocator async "
                        "(not with CUDA graph trees)",
                        false});
      }
    }
  }

  int failed = 0;
  for (const CheckRow& r : rows) failed += r.required && r.status == CheckStatus::kFail;
  report.can_capture = failed == 0;
  if (!drv.found) {
    report.verdict = "numtrace cannot capture on this machine: no CUDA driver (libcuda.so.1 not found). "
                     "numtrace diff and numtrace show work here.";
  } else if (failed > 0) {
    report.verdict = "numtrace cannot capture here: " + std::to_string(failed) +
                     (failed == 1 ? " check failed" : " checks failed") + " (see the table).";
  } else {
    report.verdict = "numtrace can capture here.";
  }
  return report;
}

}  // namespace numtrace::launcher

#include "launcher/doctor/system_probe.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>

#include "absl/status/statusor.h"
#include "analyzer/read/importer.h"
#include "common/format/capture_counter_list.h"
#include "common/text/trim.h"
#include "launcher/child_process.h"
#include "launcher/rank_listing.h"
#ifdef NUMTRACE_DOCTOR_HAS_LIBRARY_FINDER
#include "shim/driver/library_finder.h"
#endif

namespace numtrace::launcher {
namespace {

// Driver API signatures, declared here so that no CUDA header is needed
// (CUresult is an int enum, CUdevice an int, handles pointers).
using CuInit = int (*)(unsigned);
using CuDriverGetVersion = int (*)(int*);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetName = int (*)(char*, int, int);
using CuDeviceGetAttribute = int (*)(int*, int, int);
using CuDevicePrimaryCtxRetain = int (*)(void**, int);
using CuCtxSetCurrent = int (*)(void*);
using CuMemAlloc = int (*)(unsigned long long*, size_t);
using CuMemFree = int (*)(unsigned long long);
using CuModuleLoadData = int (*)(void**, const void*);
using CuModuleGetFunction = int (*)(void**, void*, const char*);
using CuLaunchKernel = int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               void*, void**, void**);
using CuCtxSynchronize = int (*)();

// A kernel for the doctor's CUDA child to launch under the library, so the
// trace's footer tells whether the driver gave parameter layouts
// (launches_no_layout: without them kernels carry no buffers). PTX,
// JIT-compiled for the GPU there.
constexpr char kDoctorKernelPtx[] = R"(.version 8.0
.target sm_75
.address_size 64
.visible .entry numtrace_doctor_kernel(.param .u64 p0, .param .u32 p1)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p0];
  ld.param.u32 %r1, [p1];
  cvta.to.global.u64 %rd2, %rd1;
  st.global.u32 [%rd2], %r1;
  ret;
}
)";

using CuptiGetVersion = int (*)(uint32_t*);
constexpr int kAttrComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrComputeCapabilityMinor = 76;

template <typename F>
F Sym(void* handle, const char* name) {
  return reinterpret_cast<F>(dlsym(handle, name));
}

std::string LoadedPath(void* handle, void* symbol) {
  Dl_info info{};
  if (symbol && dladdr(symbol, &info) && info.dli_fname) return info.dli_fname;
  return "";
}

std::string Value(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  }
  return "";
}

constexpr const char kPythonProbe[] = R"(
import sys
sc = sys.modules.get("sitecustomize")
print("sitecustomize=" + str(getattr(sc, "__file__", "")))
try:
    import torch
    print("torch=" + torch.__version__)
    print("torch_cuda=" + str(int(torch.cuda.is_available())))
    import torch.optim.optimizer as o
    print("step_hook=" + str(int(len(getattr(o, "_global_optimizer_post_hooks", {})) > 0)))
except Exception as e:
    print("torch_error=" + repr(e)[:160].replace("\n", " "))
if "torch" in sys.modules:
    # The tensor map's bridge, built as a job would build it (then removed).
    try:
        import importlib.util, os
        path = os.path.join(os.path.dirname(sc.__file__), "numtrace_tensor_map.py")
        spec = importlib.util.spec_from_file_location("numtrace_tensor_map_probe", path)
        tm = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(tm)
        print("bridge=" + tm.build_check(torch).replace("\n", " ")[:300])
    except Exception as e:
        print("bridge=failed: " + (str(e) or type(e).__name__)[:240].replace("\n", " "))
try:
    import triton
    print("triton=" + triton.__version__)
    import triton.compiler.compiler as c
    print("triton_hook=" + str(int(bool(getattr(c.CompiledKernel, "_numtrace_hooked", False)))))
except Exception as e:
    print("triton_error=" + repr(e)[:160].replace("\n", " "))
)";

}  // namespace

void ReadChildLayouts(const std::string& dir, SubscriberFacts* facts) {
  for (const std::string& path : TraceFilesIn(dir)) {
    absl::StatusOr<analyzer::Trace> t = analyzer::ReadTrace(path, analyzer::FindImporter("numtrace"));
    if (!t.ok() || !t->footer) continue;
    std::optional<uint64_t> seen = t->footer->CounterValue(CaptureCounter::kLaunchesSeen);
    if (!seen) continue;
    facts->launches_seen = *seen;
    facts->launches_no_layout = t->footer->CounterValue(CaptureCounter::kLaunchesNoLayout).value_or(0);
    facts->layouts_known = true;
    return;
  }
}

LibraryFacts MachineProbe::Library(const InstallLayout& layout) {
  // In a child: a library that crashes on load must not take the doctor down.
  LibraryFacts facts;
  int fds[2];
  if (pipe(fds) != 0) {
    facts.error = "pipe failed";
    return facts;
  }
  ChildStart start;
  start.body = [&]() {
    close(fds[0]);
    setenv("NUMTRACE_ENABLE", "0", 1);
    std::string msg;
    void* h = dlopen(layout.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      msg = std::string("E") + dlerror();
    } else if (auto version = Sym<const char* (*)()>(h, "numtrace_version")) {
      msg = std::string("V") + version();
    } else {
      msg = "Eloads, but has no numtrace_version (not numtrace's library?)";
    }
    ssize_t ignored = write(fds[1], msg.data(), msg.size());
    (void)ignored;
    return 0;
  };
  pid_t pid = StartChild(start);
  close(fds[1]);
  std::string got;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  if (!got.empty() && got[0] == 'V') {
    facts.loads = true;
    facts.version = got.substr(1);
  } else if (!got.empty()) {
    facts.error = got.substr(1);
  } else {
    facts.error = "loading it killed the test process (status " + std::to_string(status) + ")";
  }
  return facts;
}

DriverFacts MachineProbe::Driver() {
  DriverFacts facts;
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    facts.error = e ? e : "dlopen failed";
    return facts;
  }
  facts.found = true;
  auto init = Sym<CuInit>(h, "cuInit");
  facts.path = LoadedPath(h, reinterpret_cast<void*>(init));
  if (facts.path.empty()) facts.path = "libcuda.so.1";
  auto get_version = Sym<CuDriverGetVersion>(h, "cuDriverGetVersion");
  if (get_version) get_version(&facts.version);
  if (!init) {
    facts.init_result = 999;
    return facts;
  }
  facts.init_result = init(0);
  if (facts.init_result != 0) return facts;
  auto count_fn = Sym<CuDeviceGetCount>(h, "cuDeviceGetCount");
  auto get = Sym<CuDeviceGet>(h, "cuDeviceGet");
  auto name_fn = Sym<CuDeviceGetName>(h, "cuDeviceGetName");
  auto attr = Sym<CuDeviceGetAttribute>(h, "cuDeviceGetAttribute");
  int count = 0;
  if (!count_fn || !get || !name_fn || !attr || count_fn(&count) != 0) return facts;
  for (int i = 0; i < count; ++i) {
    int dev = 0;
    if (get(&dev, i) != 0) continue;
    GpuFacts g;
    g.index = i;
    char name[256] = {0};
    name_fn(name, sizeof name, dev);
    g.name = name;
    attr(&g.cc_major, kAttrComputeCapabilityMajor, dev);
    attr(&g.cc_minor, kAttrComputeCapabilityMinor, dev);
    facts.gpus.push_back(g);
  }
  return facts;
}

CuptiFacts MachineProbe::Cupti(const Environment& env) {
  CuptiFacts facts;
#ifdef NUMTRACE_DOCTOR_HAS_LIBRARY_FINDER
  shim::LibrarySearch search;
  search.env_override = env.Get("NUMTRACE_CUPTI_LIB");
  search.cuda_home = env.Get("CUDA_HOME");
  search.loaded = shim::LoadedLibraryPaths();
  shim::LoadedLibrary lib = shim::OpenFirst(shim::CuptiCandidates(search));
  if (!lib.handle) {
    facts.tried = lib.tried;
    return facts;
  }
  facts.found = true;
  facts.path = lib.path;
  if (auto version = Sym<CuptiGetVersion>(lib.handle, "cuptiGetVersion")) {
    uint32_t v = 0;
    if (version(&v) == 0) facts.version = v;
  }
  std::string real = LoadedPath(lib.handle, dlsym(lib.handle, "cuptiGetVersion"));
  if (!real.empty()) facts.path = real;
#else
  facts.tried = "nothing: this numtrace was built without its CUDA layer";
#endif
  return facts;
}

SubscriberFacts MachineProbe::Subscriber(const InstallLayout& layout, const Environment& base) {
  SubscriberFacts facts;
  std::error_code ec;
  std::string dir = (std::filesystem::temp_directory_path(ec) /
                     ("numtrace-doctor-" + std::to_string(getpid()))).string();
  std::filesystem::create_directories(dir, ec);
  Environment env = base;
  env.Prepend("LD_PRELOAD", layout.library);
  env.Set("NUMTRACE_OUTPUT_DIR", dir);
  env.Set("NUMTRACE_LOG_LEVEL", "info");
  env.Set("NUMTRACE_STEPS", "all");
  CapturedChild child = RunChildCaptured({layout.bin_dir + "/numtrace", "__cuda-child"}, env, 60);
  ReadChildLayouts(dir, &facts);
  std::filesystem::remove_all(dir, ec);
  facts.ran = child.result.started && child.result.exit_code == 0;
  std::string err(Trim(child.err));
  if (!facts.ran) {
    facts.message = "exit " + std::to_string(child.result.exit_code) + ": " + err.substr(0, 300);
    return facts;
  }
  facts.held = err.find("already in use") != std::string::npos;
  // The library's own line when it could not work (held, or other).
  std::istringstream lines(err);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find("already in use") != std::string::npos || line.find("not capturing") != std::string::npos) {
      facts.message = line;
      facts.held = true;
    }
  }
  return facts;
}

PythonFacts MachineProbe::Python(const InstallLayout& layout, const Environment& base) {
  PythonFacts facts;
  facts.interpreter = base.Get("NUMTRACE_PYTHON", "python3");
  Environment env = base;
  env.Prepend("PYTHONPATH", layout.hooks_dir);
  env.Set("NUMTRACE_LIB_PATH", layout.library);
  env.Set("NUMTRACE_ENABLE", "0");  // the library stays inert in the probe
  CapturedChild child = RunChildCaptured({facts.interpreter, "-c", kPythonProbe}, env, 120);
  if (!child.result.started || child.result.exit_code != 0) {
    facts.error = std::string(Trim(child.err).substr(0, 200));
    if (facts.error.empty()) facts.error = "exit " + std::to_string(child.result.exit_code);
    return facts;
  }
  facts.python = true;
  facts.torch_version = Value(child.out, "torch");
  facts.torch_error = Value(child.out, "torch_error");
  facts.torch_cuda = Value(child.out, "torch_cuda") == "1";
  facts.triton_version = Value(child.out, "triton");
  facts.step_hook = Value(child.out, "step_hook") == "1";
  facts.triton_hook = Value(child.out, "triton_hook") == "1";
  facts.bridge = Value(child.out, "bridge");
  if (Value(child.out, "sitecustomize").rfind(layout.hooks_dir, 0) != 0) {
    facts.error = "numtrace's sitecustomize was not the one loaded";
  }
  return facts;
}

int CudaChildMain() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    std::fprintf(stderr, "numtrace __cuda-child: libcuda.so.1 not found\n");
    return 1;
  }
  auto init = Sym<CuInit>(h, "cuInit");
  auto get = Sym<CuDeviceGet>(h, "cuDeviceGet");
  auto retain = Sym<CuDevicePrimaryCtxRetain>(h, "cuDevicePrimaryCtxRetain");
  auto set = Sym<CuCtxSetCurrent>(h, "cuCtxSetCurrent");
  auto alloc = Sym<CuMemAlloc>(h, "cuMemAlloc_v2");
  auto release = Sym<CuMemFree>(h, "cuMemFree_v2");
  int dev = 0, r = 0;
  void* ctx = nullptr;
  unsigned long long ptr = 0;
  if (!init || !get || !retain || !set || !alloc || !release) {
    std::fprintf(stderr, "numtrace __cuda-child: driver entry points missing\n");
    return 1;
  }
  if ((r = init(0)) || (r = get(&dev, 0)) || (r = retain(&ctx, dev)) || (r = set(ctx)) ||
      (r = alloc(&ptr, 256))) {
    std::fprintf(stderr, "numtrace __cuda-child: CUDA call failed with CUresult %d\n", r);
    return 1;
  }
  // A few launches for the layout check; optional (the doctor's row skips
  // when no trace says anything): a failure here is not the subscriber's.
  auto load = Sym<CuModuleLoadData>(h, "cuModuleLoadData");
  auto function = Sym<CuModuleGetFunction>(h, "cuModuleGetFunction");
  auto launch = Sym<CuLaunchKernel>(h, "cuLaunchKernel");
  auto sync = Sym<CuCtxSynchronize>(h, "cuCtxSynchronize");
  void* module = nullptr;
  void* fn = nullptr;
  if (load && function && launch && sync && load(&module, kDoctorKernelPtx) == 0 &&
      function(&fn, module, "numtrace_doctor_kernel") == 0) {
    unsigned n = 7;
    void* params[] = {&ptr, &n};
    for (int i = 0; i < 4; ++i) launch(fn, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr);
    sync();
  }
  if ((r = release(ptr))) {
    std::fprintf(stderr, "numtrace __cuda-child: CUDA call failed with CUresult %d\n", r);
    return 1;
  }
  return 0;
}

}  // namespace numtrace::launcher

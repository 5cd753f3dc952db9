#include "analyzer/cli/tensor_command.h"

#include <algorithm>
#include <filesystem>

#include "analyzer/cli/atomic_file.h"
#include "analyzer/cli/diff_command.h"
#include "analyzer/tensors/dump_reader.h"
#include "analyzer/tensors/tensor_diff.h"
#include "analyzer/tensors/tensor_report.h"

namespace numtrace::analyzer {
namespace {

int Fail(std::ostream& err, std::string line) {
  std::replace(line.begin(), line.end(), '\n', ' ');
  err << "numtrace-diff: " << line << "\n";
  return kExitError;
}

int Fail(std::ostream& err, const absl::Status& s) {
  return Fail(err, std::string(s.message().data(), s.message().size()));
}

}  // namespace

int RunTensorCommand(const TensorCommandOptions& opt, std::ostream& out, std::ostream& err,
                     bool stdout_is_tty) {
  namespace fs = std::filesystem;
  for (const std::string* path : {&opt.json_path, &opt.html_path}) {
    if (path->empty()) continue;
    std::error_code ec;
    if (fs::exists(*path, ec) && !opt.force) {
      return Fail(err, *path + ": output file exists (use --force to overwrite)");
    }
    const fs::path parent = fs::path(*path).parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec)) {
      return Fail(err, *path + ": output directory " + parent.string() + " does not exist");
    }
  }
  if (!opt.json_path.empty() && opt.json_path == opt.html_path) {
    return Fail(err, opt.json_path + ": --json and --html name the same file");
  }
  absl::StatusOr<DumpSide> a = ReadDumpSide(opt.a, opt.dtype);
  if (!a.ok()) return Fail(err, a.status());
  absl::StatusOr<DumpSide> b = ReadDumpSide(opt.b, opt.dtype);
  if (!b.ok()) return Fail(err, b.status());
  const TensorDiff diff = DiffDumps(*a, *b, {opt.rtol, opt.atol});
  if (!opt.json_path.empty()) {
    if (absl::Status s = WriteFileAtomically(opt.json_path, TensorJsonSummary(diff)); !s.ok()) return Fail(err, s);
  }
  if (!opt.html_path.empty()) {
    if (absl::Status s = WriteFileAtomically(opt.html_path, TensorHtmlReport(diff)); !s.ok()) return Fail(err, s);
  }
  if (!opt.quiet) {
    out << TensorTerminalSummary(diff, ShouldUseColor(opt.color, stdout_is_tty));
    if (!opt.json_path.empty()) out << "summary written to " << opt.json_path << "\n";
    if (!opt.html_path.empty()) out << "report written to " << opt.html_path << "\n";
  }
  out.flush();
  return diff.verdict == Verdict::kDiverged ? kExitDiverged : kExitSame;
}

}  // namespace numtrace::analyzer

// File: analyzer/cli/output_file.h
//
// numtrace-diff's outputs (--json, -o/--html, any later one) under one rule:
// writing a report never destroys anything.
//
// - CheckOutputs, before any work: an output that is one of the inputs (a
//   trace file, the --override file, a trace of an input directory, compared
//   by device and inode after resolving links), that would add a trace file
//   to an input directory, that is an existing non-regular file (a device
//   such as /dev/full, a fifo, a directory), or that names the same file as
//   another output is refused, with or without --force. So is a symbolic
//   link, whatever it points to: an output is never written through a link
//   (`twice -o DIR --force` once replaced a trace that DIR/summary.json
//   linked to). An existing regular file is refused without --force.
// - WriteOutput: the bytes go to a fresh temporary file beside the target
//   (created exclusively), then into place in one step. Without --force that
//   step fails when the name exists (renameat2 RENAME_NOREPLACE, else
//   link(2)), so a file that appeared during the run is never replaced and of
//   two runs racing for one new name only one succeeds. With --force it is a
//   rename(2) over a regular file (lstat: not over a link that appeared). A write error (ENOSPC, EIO, EFBIG) removes
//   the temporary file and is returned as one line; SIGINT / SIGTERM while a
//   temporary file exists remove it before the process dies of the signal.
// - The path "-" means standard output (written as is, nothing checked).
//
// Example:
//   std::vector<OutputSpec> outs = {{"--json", "s.json"}, {"-o", "r.html"}};
//   if (absl::Status s = CheckOutputs(outs, {"a.jsonl", "b.jsonl"}, force); !s.ok()) ...
//   absl::Status w = WriteOutput("s.json", json, force, std::cout);
#ifndef NUMTRACE_ANALYZER_CLI_OUTPUT_FILE_H_
#define NUMTRACE_ANALYZER_CLI_OUTPUT_FILE_H_

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace numtrace::analyzer {

inline constexpr std::string_view kStdoutPath = "-";

struct OutputSpec {
  std::string flag;  // for messages: "--json"
  std::string path;  // "" = not requested; "-" = standard output
};

// `inputs`: what the command reads (trace files or directories of traces,
// the --override file). InvalidArgument naming the path and the reason.
[[nodiscard]] absl::Status CheckOutputs(const std::vector<OutputSpec>& outputs,
                                        const std::vector<std::string>& inputs, bool force);

// Writes `contents` to `path` as described above ("-": to `out`).
// Unavailable for write errors, AlreadyExists when the name appeared
// meanwhile (without `force`), FailedPrecondition when it became something
// other than a regular file.
[[nodiscard]] absl::Status WriteOutput(const std::string& path, std::string_view contents,
                                       bool force, std::ostream& out);

// A temporary file beside `target` that is removed unless committed, also
// when SIGINT or SIGTERM arrives (one at a time per process). Exposed for
// tests of the signal path.
class TempOutput {
 public:
  [[nodiscard]] static absl::StatusOr<TempOutput> Create(const std::string& target);
  TempOutput(TempOutput&& other) noexcept;
  TempOutput& operator=(TempOutput&&) = delete;
  TempOutput(const TempOutput&) = delete;
  ~TempOutput();

  [[nodiscard]] absl::Status Write(std::string_view bytes);
  // Closes and moves into place (replacing only when `replace`).
  [[nodiscard]] absl::Status Commit(bool replace);
  const std::string& path() const { return tmp_; }

 private:
  TempOutput(std::string target, std::string tmp, int fd) : target_(std::move(target)), tmp_(std::move(tmp)), fd_(fd) {}
  void Discard();
  std::string target_, tmp_;
  int fd_ = -1;
};

}  // namespace numtrace::analyzer

#endif  // NUMTRACE_ANALYZER_CLI_OUTPUT_FILE_H_

#include "test/analyzer/read/outsider/toy_ops_reader.h"

#include <bit>
#include <charconv>
#include <string>

#include "absl/status/status.h"
#include "analyzer/read/text_util.h"
#include "analyzer/read/trace_file_name.h"
#include "common/text/trim.h"

namespace numtrace::analyzer {

std::optional<int64_t> ToyOpsRank(std::string_view file_name) {
  const size_t slash = file_name.rfind('/');
  std::string_view name = slash == std::string_view::npos ? file_name : file_name.substr(slash + 1);
  uint64_t rank = 0;
  if (!ConsumePrefix(&name, "toy_rank_") || !name.ends_with(".csv")) return std::nullopt;
  name.remove_suffix(4);
  if (!ParseUint(name, &rank)) return std::nullopt;
  return static_cast<int64_t>(rank);
}

bool SniffToyOps(std::string_view head) { return head.starts_with("# toy ops v1"); }

absl::StatusOr<Trace> ReadToyOps(LineReader& reader) {
  Trace trace;
  trace.path = std::string(reader.path());
  trace.label = std::string(FileStem(reader.path()));
  trace.rank = ToyOpsRank(reader.path()).value_or(0);
  trace.records_environment = false;
  trace.records_launches = false;
  LineReader::Line line;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(&line);
    if (!more.ok()) return more.status();
    if (!*more) break;
    if (line.number == 1) continue;  // "# toy ops v1"
    const std::string_view text = Trim(line.text);
    if (text.empty()) continue;
    const size_t comma = text.find(',');
    double l2 = 0;
    const std::string_view value = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (comma == 0 || value.empty() ||
        std::from_chars(value.data(), value.data() + value.size(), l2).ptr != value.data() + value.size()) {
      CountSkipped(&trace, kToyOpsSkips[0], line.number);
      continue;
    }
    Kernel k;
    k.seq = trace.kernels.size();
    k.level = RecordLevel::kOp;
    k.name = k.demangled = trace.strings.Intern(text.substr(0, comma));
    k.first_buffer = static_cast<uint32_t>(trace.buffers.size());
    k.buffer_count = 1;
    Buffer b;
    b.role = Role::kOut;
    b.addr = trace.kernels.size() + 1;
    b.stats.l2 = l2;
    b.stats.hash = std::bit_cast<uint64_t>(l2);
    trace.buffers.push_back(b);
    trace.kernels.push_back(k);
  }
  if (trace.kernels.empty()) return absl::InvalidArgumentError(Cat(reader.path(), ": no operators"));
  return trace;
}

}  // namespace numtrace::analyzer

#include "launcher/show_command.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <memory>

#include "CLI/CLI.hpp"
#include "analyzer/judge/provenance.h"
#include "analyzer/read/input.h"
#include "analyzer/read/line_reader.h"
#include "common/format/environment.h"
#include "common/text/terminal_safe.h"
#include "re2/re2.h"
#include "simdjson.h"

namespace numtrace::launcher {
namespace {

std::optional<uint64_t> ParseU64(std::string_view s) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A record line for --json as the file holds it, except that control bytes
// (raw ones are invalid JSON, yet the lenient parser lets them through in
// fields it skips) and C1 controls become \u00XX: the same JSON value, and
// nothing a terminal would act on.
std::string JsonLineSafe(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  char buf[8];
  for (size_t i = 0; i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    const bool c1 = c == 0xC2 && i + 1 < line.size() && static_cast<unsigned char>(line[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(line[i + 1]) <= 0x9F;
    if ((c < 0x20 && c != '\t') || c == 0x7F || c1) {
      std::snprintf(buf, sizeof buf, "\\u%04x", c1 ? static_cast<unsigned char>(line[++i]) : c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

struct Selection {
  // RE2: linear time and bounded stack whatever the name's length (a
  // 50,000-character template name crashed std::regex's recursion).
  std::unique_ptr<re2::RE2> kernel;
  SeqRange seq;
};

bool Selected(const Selection& s, uint64_t seq, std::string_view name, std::string_view demangled) {
  if (seq < s.seq.first || seq > s.seq.last) return false;
  if (!s.kernel) return true;
  return re2::RE2::PartialMatch(name, *s.kernel) || re2::RE2::PartialMatch(demangled, *s.kernel);
}

void PrintBuffer(const analyzer::Trace& t, const analyzer::Buffer& b, std::ostream& out) {
  const BufferStats& s = b.stats;
  out << "    arg " << b.arg << "  " << DTypeName(b.dtype);
  // Operator level: the tensor's shape and device (docs/format.md).
  if (b.shape != analyzer::kNoString) out << TerminalSafe(t.strings.View(b.shape));
  if (b.device != analyzer::kNoString) out << " " << TerminalSafe(t.strings.View(b.device));
  out << " (" << DTypeSourceName(b.dtype_from) << ")  " << RoleName(b.role) << "  " << b.bytes << " B  n=" << s.n;
  if (s.nan || s.inf || s.ninf) out << "  NaN=" << s.nan << " +Inf=" << s.inf << " -Inf=" << s.ninf;
  if (s.zero) out << "  zero=" << s.zero;
  if (s.sub) out << "  subnormal=" << s.sub;
  if (b.dtype != DType::kRaw) {
    if (s.has_range) out << "  min=" << Number(s.min) << " max=" << Number(s.max);
    out << "  sum=" << Number(s.sum) << " l2=" << Number(s.l2);
  }
  char hash[24];
  std::snprintf(hash, sizeof hash, "%016" PRIx64, s.hash);
  out << "  hash=" << hash << "\n";
}

// `--env`: the trace's environment (header and `environment` records
// merged), one key a line in the key table's order, then the keys it does
// not know.
int ShowEnvironment(const std::string& path, const CommandContext& ctx) {
  absl::StatusOr<analyzer::Trace> trace = analyzer::ReadTrace(path);
  if (!trace.ok()) return FailLine(ctx, "show", trace.status());
  const EnvironmentValues& env = trace->header.environment;
  if (env.empty()) {
    ctx.out << TerminalSafe(path) << ": no environment recorded"
            << (trace->records_environment ? "" : " (a " + std::string(trace->kind) + " records none)") << "\n";
    return kExitOk;
  }
  std::vector<const std::pair<std::string, std::string>*> order;
  for (const auto& kv : env) order.push_back(&kv);
  std::stable_sort(order.begin(), order.end(), [](const auto* x, const auto* y) {
    return EnvironmentKeyOrder(x->first) < EnvironmentKeyOrder(y->first);
  });
  for (const auto* kv : order) ctx.out << TerminalSafe(kv->first) << " = " << TerminalSafe(kv->second) << "\n";
  return kExitOk;
}

int ShowReadable(const std::string& path, const Selection& sel, const CommandContext& ctx) {
  absl::StatusOr<analyzer::Trace> trace = analyzer::ReadTrace(path);
  if (!trace.ok()) return FailLine(ctx, "show", trace.status());
  const analyzer::Trace& t = *trace;
  std::ostream& out = ctx.out;
  out << TerminalSafe(path) << ": label " << TerminalSafe(t.label) << ", rank " << t.rank << ", " << t.kernels.size()
      << " kernels" << (t.truncated ? ", TRUNCATED (no footer)" : "");
  if (t.footer && t.footer->dropped) out << ", " << t.footer->dropped << " dropped";
  if (t.footer && t.footer->unmeasured) out << ", " << t.footer->unmeasured << " unmeasured";
  out << "\n";
  if (t.header.device) {
    const DeviceInfo& d = *t.header.device;
    out << "device " << d.index << ": " << TerminalSafe(d.name) << " (cc " << TerminalSafe(d.cc) << "), driver "
        << TerminalSafe(d.driver) << ", CUDA " << TerminalSafe(d.cuda) << "\n";
  }
  if (t.header.capture) {
    out << "captured steps:";
    for (int64_t s : t.header.capture->steps) out << " " << s;
    if (t.header.capture->steps.empty()) {
      // An empty list is `none` (watch mode's default) or `all`: the setting says which.
      // Without NUMTRACE_STEPS: `all` for a step mode other than `mark` (settings.h's default).
      std::string steps = "none";
      for (const auto& [variable, value] : t.header.capture->settings) {
        if (variable == "NUMTRACE_STEP_MODE" && value != "mark" && steps == "none") steps = "all";
      }
      for (const auto& [variable, value] : t.header.capture->settings) {
        if (variable == "NUMTRACE_STEPS") steps = TerminalSafe(value);
      }
      out << " " << steps;
    }
    out << "; outputs " << TerminalSafe(t.header.capture->outputs);
    if (!t.header.capture->selector.empty()) out << "; " << TerminalSafe(t.header.capture->selector);
    out << "\n";
  }
  if (!t.digests.empty()) {  // watch mode (docs/format.md, `digest`)
    uint64_t launches = 0, lost = 0;
    const analyzer::StepDigest* nonfinite = nullptr;
    for (const analyzer::StepDigest& d : t.digests) {
      launches += d.kernels;
      lost += d.lost;
      if (nonfinite == nullptr && d.nonfinite) nonfinite = &d;
    }
    out << "watch " << (t.header.capture ? t.header.capture->watch : std::string()) << ": "
        << t.digests.size() << " steps digested (" << t.digests.front().step << "-" << t.digests.back().step
        << "), " << launches << " launches";
    if (lost != 0) out << ", " << lost << " not digested";
    if (nonfinite != nullptr) out << "; first NaN/Inf: step " << nonfinite->step << ", launch " << *nonfinite->nonfinite;
    out << "\n";
  }
  size_t shown = 0;
  for (const analyzer::Kernel& k : t.kernels) {
    if (!Selected(sel, k.seq, t.Name(k), t.Demangled(k))) continue;
    ++shown;
    out << "seq " << k.seq;
    if (k.step >= 0) out << "  step " << k.step;
    out << "  " << TerminalSafe(t.Demangled(k));
    if (k.level == analyzer::RecordLevel::kOp) {
      out << "  (operator call)\n";
    } else {
      out << "  grid " << k.grid[0] << "x" << k.grid[1] << "x" << k.grid[2] << " block " << k.block[0] << "x"
          << k.block[1] << "x" << k.block[2] << "\n";
    }
    // Where in the model it came from (trace provenance), when recorded.
    const std::string where = analyzer::ProvenanceLabel(t.Scope(k), t.Op(k), t.PhaseOf(k), t.Src(k));
    if (!where.empty()) out << "  in " << TerminalSafe(where) << "\n";
    for (const analyzer::Buffer& b : t.BuffersOf(k)) PrintBuffer(t, b, out);
  }
  for (const NoteRecord& n : t.notes) {
    out << "note (" << TerminalSafe(n.level) << "): " << TerminalSafe(n.msg) << "\n";
  }
  out << shown << " of " << t.kernels.size() << " kernels shown\n";
  return kExitOk;
}

// Prints the selected kernel lines verbatim. The trace is read first, so a
// malformed file fails the same way as without --json.
int ShowJson(const std::string& path, const Selection& sel, const CommandContext& ctx) {
  absl::StatusOr<analyzer::Trace> trace = analyzer::ReadTrace(path);
  if (!trace.ok()) return FailLine(ctx, "show", trace.status());
  // --json prints the trace's own kernel lines: a file of numtrace's format.
  const analyzer::Importer* numtrace = analyzer::FindImporter("numtrace");
  if (trace->kind != numtrace->kind) {
    return FailLine(ctx, "show", path + ": --json needs a " + std::string(numtrace->kind) + " (this is a " + std::string(trace->kind) + ")");
  }
  // The same line reader as the trace reader: a .gz trace is decompressed,
  // a line is bounded (line_reader.h).
  absl::StatusOr<std::unique_ptr<analyzer::LineReader>> reader = analyzer::LineReader::Open(path);
  if (!reader.ok()) return FailLine(ctx, "show", reader.status());
  simdjson::ondemand::parser parser;
  analyzer::LineReader::Line line;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->Next(&line);
    if (!more.ok()) return FailLine(ctx, "show", more.status());
    if (!*more) break;
    simdjson::ondemand::document doc;
    if (parser.iterate(line.text.data(), line.text.size(), line.readable).get(doc)) continue;
    std::string_view type;
    if (doc["type"].get_string().get(type) || type != "kernel") continue;
    uint64_t seq = 0;
    if (doc["seq"].get_uint64().get(seq) || seq >= trace->kernels.size()) continue;
    const analyzer::Kernel& k = trace->kernels[seq];
    if (Selected(sel, seq, trace->Name(k), trace->Demangled(k))) ctx.out << JsonLineSafe(line.text) << "\n";
  }
  return kExitOk;
}

}  // namespace

std::optional<SeqRange> ParseSeqRange(const std::string& text) {
  SeqRange r;
  size_t dots = text.find("..");
  if (dots == std::string::npos) {
    std::optional<uint64_t> v = ParseU64(text);
    if (!v) return std::nullopt;
    r.first = r.last = *v;
    return r;
  }
  std::string_view a(text.data(), dots), b(text.data() + dots + 2, text.size() - dots - 2);
  if (a.empty() && b.empty()) return std::nullopt;
  if (!a.empty()) {
    std::optional<uint64_t> v = ParseU64(a);
    if (!v) return std::nullopt;
    r.first = *v;
  }
  if (!b.empty()) {
    std::optional<uint64_t> v = ParseU64(b);
    if (!v) return std::nullopt;
    r.last = *v;
  }
  if (r.first > r.last) return std::nullopt;
  return r;
}

int ShowCommandMain(const std::vector<std::string>& args, const CommandContext& ctx) {
  std::string path, kernel, seq;
  bool json = false, env = false;
  CLI::App app{"numtrace show: a trace as a readable listing (kernels, buffers, dtypes, stats)"};
  app.name("numtrace show");
  app.add_option("TRACE", path, "a trace file (rank_R.ntrace.jsonl) or DebugMode log")->required();
  app.add_option("--kernel", kernel, "only kernels whose name or demangled name matches this regex (RE2 syntax)");
  app.add_option("--seq", seq, "only launches with seq N, or in N..M (N.. and ..M too)");
  app.add_flag("--json", json, "print the selected kernel records as the file holds them (JSONL)");
  app.add_flag("--env", env, "print the trace's environment (settings, libraries, GPU), one key a line");
  app.footer(R"(Examples:
  numtrace show runA/rank_0.ntrace.jsonl
  numtrace show runA/rank_0.ntrace.jsonl --kernel 'sgemm|gemm' --seq 10..40
  numtrace show runA/rank_0.ntrace.jsonl --seq 412 --json | jq .buffers
  numtrace show runA/rank_0.ntrace.jsonl --env)");
  int code = 0;
  if (!ParseArgs(app, args, ctx, &code)) return code;
  if (env) return ShowEnvironment(path, ctx);
  Selection sel;
  if (!seq.empty()) {
    std::optional<SeqRange> r = ParseSeqRange(seq);
    if (!r) return FailLine(ctx, "show", "--seq '" + seq + "' is not N, N..M, N.. or ..M");
    sel.seq = *r;
  }
  if (!kernel.empty()) {
    re2::RE2::Options options;
    options.set_log_errors(false);  // the one line below says it
    options.set_never_capture(true);
    sel.kernel = std::make_unique<re2::RE2>(kernel, options);
    if (!sel.kernel->ok()) {
      return FailLine(ctx, "show", "--kernel '" + kernel + "' is not a valid regex (RE2 syntax): " +
                                       sel.kernel->error());
    }
  }
  return json ? ShowJson(path, sel, ctx) : ShowReadable(path, sel, ctx);
}

}  // namespace numtrace::launcher

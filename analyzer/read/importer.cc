#include "analyzer/read/importer.h"

#include <memory>
#include <new>

#include "absl/status/status.h"
#include "analyzer/read/debugmode_json_reader.h"
#include "analyzer/read/debugmode_reader.h"
#include "analyzer/read/text_util.h"
#include "analyzer/read/trace_file_name.h"
#include "analyzer/read/trace_reader.h"
#include "common/status/status_macros.h"
#include "common/text/trim.h"

namespace numtrace::analyzer {
namespace {

// The shim's names: rank_<R>.ntrace.jsonl, rank_<R>.pid<P>.ntrace.jsonl
// (two processes of one rank); not the writer's *.ntrace.jsonl.tmp.
std::optional<int64_t> NumtraceRank(std::string_view path) {
  std::string_view rest;
  const std::optional<int64_t> rank = RankFromFileName(path, &rest);
  if (!rank) return std::nullopt;
  if (ConsumePrefix(&rest, ".pid")) {
    const size_t digits = rest.find_first_not_of("0123456789");
    if (digits == 0 || digits == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(digits);
  }
  if (rest != ".ntrace.jsonl") return std::nullopt;
  return rank;
}

// torchtitan's activation tracer: rank_<R>_activations.log.
std::optional<int64_t> ActivationLogRank(std::string_view path) {
  std::string_view rest;
  const std::optional<int64_t> rank = RankFromFileName(path, &rest);
  if (!rank || rest != "_activations.log") return std::nullopt;
  return rank;
}

// JSON Lines whose first record is an object. Asked after every JSON format
// with a signature of its own, so that a broken numtrace trace still gets
// the numtrace reader's precise error.
bool SniffNumtrace(std::string_view head) { return head[0] == '{'; }

// The preamble "Total captured activations: N" or a first "[key]" block.
bool SniffActivationLog(std::string_view head) {
  return head[0] == '[' || head.starts_with("Total captured activations:");
}

// The table. Order is sniffing order: formats with a signature first, and
// numtrace's JSON Lines (any other '{') after every other JSON format.
const Importer kImporters[] = {
    {"debugmode-json", "DebugMode JSON log", nullptr, SniffDebugModeJson, ReadDebugModeJson, kDebugModeJsonSkips},
    {"numtrace", "numtrace trace", NumtraceRank, SniffNumtrace, ReadTraceLines, kNumtraceSkips},
    {"debugmode-log", "DebugMode log", ActivationLogRank, SniffActivationLog, ReadDebugModeLines, {}},
};

std::string_view Head(std::string_view contents) {
  if (contents.starts_with("\xEF\xBB\xBF")) contents.remove_prefix(3);  // UTF-8 BOM
  return TrimLeft(contents);
}

}  // namespace

std::span<const Importer> Importers() { return kImporters; }

const Importer* FindImporter(std::string_view name) {
  for (const Importer& i : kImporters) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

const Importer* ImporterForContent(std::string_view head) {
  head = Head(head);
  if (head.empty()) return nullptr;
  for (const Importer& i : kImporters) {
    if (i.sniff(head)) return &i;
  }
  return nullptr;
}

std::optional<TraceFileName> ParseTraceFileName(std::string_view path) {
  // A gzip'd trace keeps its name plus .gz (gzip -k); the reader inflates it.
  if (path.ends_with(".gz")) path.remove_suffix(3);
  for (const Importer& i : kImporters) {
    if (i.rank_of_file_name == nullptr) continue;
    if (std::optional<int64_t> rank = i.rank_of_file_name(path)) return TraceFileName{*rank, &i};
  }
  return std::nullopt;
}

absl::StatusOr<Trace> ReadTraceFrom(LineReader& reader, const Importer* importer) {
  if (importer == nullptr) {
    absl::StatusOr<std::string_view> head = reader.Peek();
    if (!head.ok()) return head.status();
    importer = ImporterForContent(*head);
    if (importer == nullptr) {
      if (Trim(*head).empty()) return absl::InvalidArgumentError(Cat(reader.path(), ": empty trace"));
      std::string kinds;
      for (const Importer& i : kImporters) kinds += Cat(kinds.empty() ? "" : ", ", i.kind);
      return absl::InvalidArgumentError(Cat(reader.path(), ": not a trace numtrace-diff reads (", kinds, ")"));
    }
  }
  absl::StatusOr<Trace> trace = importer->read(reader);
  if (trace.ok()) trace->kind = importer->kind;
  return trace;
}

absl::StatusOr<Trace> ReadTrace(const std::string& path, const Importer* importer) {
  // The boundary for running out of memory: one line naming the file and
  // how far it was read, never an abort (also on the reading thread).
  std::unique_ptr<LineReader> opened;
  try {
    NT_ASSIGN_OR_RETURN(opened, LineReader::Open(path));
    return ReadTraceFrom(*opened, importer);
  } catch (const std::bad_alloc&) {
    if (opened) return opened->OutOfMemoryError();
    return absl::ResourceExhaustedError(Cat(path, ": out of memory before reading it"));
  }
}

absl::StatusOr<Trace> ReadTraceBytes(std::string_view contents, std::string_view path, const Importer* importer) {
  std::unique_ptr<LineReader> reader = LineReader::FromBytes(contents, std::string(path));
  try {
    return ReadTraceFrom(*reader, importer);
  } catch (const std::bad_alloc&) {
    return reader->OutOfMemoryError();
  }
}

void CountSkipped(Trace* trace, const SkipCounter& counter, uint64_t line) {
  for (Trace::Skipped& s : trace->skipped) {
    if (s.name == counter.name) {
      ++s.count;
      return;
    }
  }
  trace->skipped.push_back({counter.name, counter.description, counter.data_loss, 1, line});
}

}  // namespace numtrace::analyzer

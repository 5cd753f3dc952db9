// File: common/format/json_writer.h
//
// A small streaming writer of JSON objects and arrays into a caller-owned
// string: it places the commas and quotes, so reports (the diff summary, the
// HTML report's data) say which fields they write and nothing else. Strings,
// doubles and stats go through jsonl_writer.h's building blocks, so every
// number and string reads the same in traces and summaries. A non-finite
// double is written as null (JSON has no Infinity).
//
// Example:
//   std::string out;
//   JsonWriter w(&out);
//   w.BeginObject().Key("verdict").String("diverged").Key("counts").BeginArray();
//   w.Uint(3).Uint(4).EndArray().Key("score").Double(1.5).EndObject();
//   // out == {"verdict":"diverged","counts":[3,4],"score":1.5}
#ifndef NUMTRACE_COMMON_FORMAT_JSON_WRITER_H_
#define NUMTRACE_COMMON_FORMAT_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace numtrace {

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}

  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  JsonWriter& EndArray() { return Close(']'); }
  // The next value is this member's.
  JsonWriter& Key(std::string_view key);

  JsonWriter& String(std::string_view s);
  JsonWriter& Int(int64_t v);
  JsonWriter& Uint(uint64_t v);
  JsonWriter& Double(double v);  // shortest round-trip; null when not finite
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  // Already-serialised JSON (a value, or "k":v members when `members`).
  JsonWriter& Raw(std::string_view json);
  JsonWriter& RawMembers(std::string_view members);

  std::string* out() { return out_; }

 private:
  JsonWriter& Open(char c);
  JsonWriter& Close(char c);
  void BeforeValue();

  std::string* out_;
  std::vector<bool> has_items_;  // per open container: something written already
  bool after_key_ = false;
};

}  // namespace numtrace

#endif  // NUMTRACE_COMMON_FORMAT_JSON_WRITER_H_

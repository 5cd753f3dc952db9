#include "common/format/json_writer.h"

#include "common/format/jsonl_writer.h"

namespace numtrace {

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_items_.empty()) {
    if (has_items_.back()) out_->push_back(',');
    has_items_.back() = true;
  }
}

JsonWriter& JsonWriter::Open(char c) {
  BeforeValue();
  out_->push_back(c);
  has_items_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::Close(char c) {
  out_->push_back(c);
  if (!has_items_.empty()) has_items_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  BeforeValue();
  AppendJsonString(key, out_);
  out_->push_back(':');
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view s) {
  BeforeValue();
  AppendJsonString(s, out_);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t v) {
  BeforeValue();
  AppendJsonInt(v, out_);
  return *this;
}

JsonWriter& JsonWriter::Uint(uint64_t v) {
  BeforeValue();
  AppendJsonUint(v, out_);
  return *this;
}

JsonWriter& JsonWriter::Double(double v) {
  BeforeValue();
  AppendJsonDouble(v, out_);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool v) {
  BeforeValue();
  out_->append(v ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_->append("null");
  return *this;
}

JsonWriter& JsonWriter::Raw(std::string_view json) {
  BeforeValue();
  out_->append(json);
  return *this;
}

JsonWriter& JsonWriter::RawMembers(std::string_view members) {
  if (members.empty()) return *this;
  BeforeValue();
  out_->append(members);
  return *this;
}

}  // namespace numtrace

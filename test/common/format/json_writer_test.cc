#include "common/format/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace numtrace {
namespace {

TEST(JsonWriterTest, PlacesCommasAndKeys) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("verdict").String("diverged").Key("counts").BeginArray();
  w.Uint(3).Uint(4).EndArray().Key("score").Double(1.5).Key("x").Null();
  w.Key("o").BeginObject().EndObject().Key("b").Bool(false).Key("i").Int(-2).EndObject();
  EXPECT_EQ(out, R"({"verdict":"diverged","counts":[3,4],"score":1.5,"x":null,"o":{},"b":false,"i":-2})");
}

TEST(JsonWriterTest, NestedArraysOfObjects) {
  std::string out;
  JsonWriter w(&out);
  w.BeginArray();
  for (int i = 0; i < 2; ++i) w.BeginObject().Key("k").Int(i).EndObject();
  w.BeginArray().EndArray().EndArray();
  EXPECT_EQ(out, R"([{"k":0},{"k":1},[]])");
}

TEST(JsonWriterTest, NonFiniteIsNullAndStringsEscaped) {
  std::string out;
  JsonWriter w(&out);
  w.BeginArray().Double(std::numeric_limits<double>::infinity()).Double(std::nan("")).String("a\"\n").EndArray();
  EXPECT_EQ(out, R"([null,null,"a\"\n"])");
}

TEST(JsonWriterTest, RawValuesAndMembers) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("s").Raw("{\"n\":1}").RawMembers("").RawMembers("\"m\":2").Key("z").Int(3).EndObject();
  EXPECT_EQ(out, R"({"s":{"n":1},"m":2,"z":3})");
}

}  // namespace
}  // namespace numtrace

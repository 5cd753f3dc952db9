// File: test/shim/cupti/nvtx_decoder_test.cc
//
// NVTX range callbacks decoded from the real parameter structs of
// generated_nvtx_meta.h: every handled id, wide and attribute names, what
// is ignored.
#include "shim/cupti/nvtx_decoder.h"

#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace numtrace::shim {
namespace {

TEST(NvtxDecoder, AsciiPushAndStart) {
  nvtxRangePushA_params push{"train_step"};
  auto r = DecodeNvtxRange(CUPTI_CBID_NVTX_nvtxRangePushA, &push);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->push);
  EXPECT_EQ(r->name, "train_step");
  nvtxRangeStartA_params start{"step 7"};
  r = DecodeNvtxRange(CUPTI_CBID_NVTX_nvtxRangeStartA, &start);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->push);
  EXPECT_EQ(r->name, "step 7");
}

TEST(NvtxDecoder, WideNamesBecomeUtf8) {
  nvtxRangePushW_params push{L"\u00e9tape \u6b65 \U0001F600"};
  auto r = DecodeNvtxRange(CUPTI_CBID_NVTX_nvtxRangePushW, &push);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "\xc3\xa9tape \xe6\xad\xa5 \xf0\x9f\x98\x80");
  nvtxRangeStartW_params start{L"s"};
  r = DecodeNvtxRange(CUPTI_CBID_NVTX_nvtxRangeStartW, &start);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "s");
  const wchar_t bad[] = {static_cast<wchar_t>(0xD800), L'x', 0};
  EXPECT_EQ(WideToUtf8(bad), "\xef\xbf\xbdx") << "a lone surrogate becomes U+FFFD";
}

TEST(NvtxDecoder, AttributeMessages) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "fwd";
  nvtxRangePushEx_params push{&a};
  auto r = DecodeNvtxRange(CUPTI_CBID_NVTX_nvtxRangePushEx, &push);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "fwd");
  a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  a.message.unicode = L"bwd";
  nvtxRangeStartEx_params start{&a};
  r = DecodeNvtxRange(CUPTI_CBID_NVTX_nvtxRangeStartEx, &start);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->push);
  EXPECT_EQ(r->name, "bwd");
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  r = DecodeNvtxRange(CUPTI_CBID_NVTX_nvtxRangePushEx, &push);
  ASSERT_TRUE(r.has_value()) << "still a push, so the pop pairs";
  EXPECT_EQ(r->name, "");
  nvtxRangePushEx_params null_attr{nullptr};
  r = DecodeNvtxRange(CUPTI_CBID_NVTX_nvtxRangePushEx, &null_attr);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "");
}

TEST(NvtxDecoder, PopsAndEnds) {
  nvtxRangePop_params pop{};
  auto r = DecodeNvtxRange(CUPTI_CBID_NVTX_nvtxRangePop, &pop);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->push);
  r = DecodeNvtxRange(CUPTI_CBID_NVTX_nvtxRangePop, nullptr);
  ASSERT_TRUE(r.has_value()) << "a pop needs no parameters";
  nvtxRangeEnd_params end{42};
  r = DecodeNvtxRange(CUPTI_CBID_NVTX_nvtxRangeEnd, &end);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->push);
}

TEST(NvtxDecoder, IgnoresOtherIdsAndNullParams) {
  nvtxMarkA_params mark{"m"};
  EXPECT_FALSE(DecodeNvtxRange(CUPTI_CBID_NVTX_nvtxMarkA, &mark).has_value());
  EXPECT_FALSE(DecodeNvtxRange(CUPTI_CBID_NVTX_nvtxRangePushA, nullptr).has_value());
  EXPECT_FALSE(DecodeNvtxRange(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &mark).has_value())
      << "domain ranges (NCCL, cuDNN) are not steps";
  auto ids = NvtxRangeIds();
  EXPECT_EQ(ids.size(), 8u);
  EXPECT_NE(std::find(ids.begin(), ids.end(), CUPTI_CBID_NVTX_nvtxRangePop), ids.end());
}

TEST(NvtxDecoder, LongNamesAreCapped) {
  std::string longname(5000, 'a');
  nvtxRangePushA_params push{longname.c_str()};
  auto r = DecodeNvtxRange(CUPTI_CBID_NVTX_nvtxRangePushA, &push);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name.size(), 1024u);
}

}  // namespace
}  // namespace numtrace::shim

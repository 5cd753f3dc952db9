// File: test/shim/cupti/cupti_api_test.cc
//
// SubscribeAs over fake CUPTI tables: CUPTI 13 gets cuptiSubscribe_v2 with
// the struct size, our name and a buffer for the holder's name; a CUPTI 12
// copy (no _v2, e.g. a cu12 PyTorch wheel's libcupti.so.12) falls back to
// cuptiSubscribe instead of leaving numtrace inert. LoadFrom on a library
// without CUPTI fails with a message naming the missing function.
#include "shim/cupti/cupti_api.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace numtrace::shim {
namespace {

struct Calls {
  int v1 = 0, v2 = 0;
  size_t struct_size = 0;
  std::string name;
  size_t old_size = 0;
  CUptiResult answer = CUPTI_SUCCESS;
} calls;

void CUPTIAPI NoOp(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

CUptiResult FakeV1(CUpti_SubscriberHandle* sub, CUpti_CallbackFunc, void*) {
  ++calls.v1;
  *sub = reinterpret_cast<CUpti_SubscriberHandle>(0x1);
  return calls.answer;
}

CUptiResult FakeV2(CUpti_SubscriberHandle* sub, CUpti_CallbackFunc, void*,
                   CUpti_SubscriberParams* p) {
  ++calls.v2;
  calls.struct_size = p->structSize;
  calls.name = p->subscriberName ? p->subscriberName : "";
  calls.old_size = p->oldSubscriberSize;
  if (calls.answer == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    std::strncpy(p->oldSubscriberName, "CUPTI for Kineto", p->oldSubscriberSize);
    return calls.answer;
  }
  *sub = reinterpret_cast<CUpti_SubscriberHandle>(0x2);
  return calls.answer;
}

class SubscribeAsTest : public ::testing::Test {
 protected:
  void SetUp() override { calls = {}; }
};

TEST_F(SubscribeAsTest, Cupti13UsesV2WithSizeNameAndHolderBuffer) {
  CuptiApi api;
  api.cuptiSubscribe = &FakeV1;
  api.cuptiSubscribe_v2 = &FakeV2;
  CUpti_SubscriberHandle sub = nullptr;
  std::string holder;
  EXPECT_EQ(SubscribeAs(api, &sub, &NoOp, nullptr, "numtrace", &holder), CUPTI_SUCCESS);
  EXPECT_EQ(calls.v2, 1);
  EXPECT_EQ(calls.v1, 0);
  EXPECT_EQ(calls.struct_size, CUpti_SubscriberParams_STRUCT_SIZE);
  EXPECT_EQ(calls.name, "numtrace");
  EXPECT_GE(calls.old_size, static_cast<size_t>(CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(sub), 0x2u);
  EXPECT_TRUE(holder.empty());
}

TEST_F(SubscribeAsTest, HolderNameComesBackWhenCuptiIsTaken) {
  CuptiApi api;
  api.cuptiSubscribe = &FakeV1;
  api.cuptiSubscribe_v2 = &FakeV2;
  calls.answer = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  CUpti_SubscriberHandle sub = nullptr;
  std::string holder;
  EXPECT_EQ(SubscribeAs(api, &sub, &NoOp, nullptr, "numtrace", &holder),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  EXPECT_EQ(holder, "CUPTI for Kineto");
}

TEST_F(SubscribeAsTest, Cupti12WithoutV2FallsBackToPlainSubscribe) {
  CuptiApi api;
  api.cuptiSubscribe = &FakeV1;
  EXPECT_TRUE(api.loaded()) << "a CUPTI 12 table is usable";
  CUpti_SubscriberHandle sub = nullptr;
  std::string holder = "untouched";
  EXPECT_EQ(SubscribeAs(api, &sub, &NoOp, nullptr, "numtrace", &holder), CUPTI_SUCCESS);
  EXPECT_EQ(calls.v1, 1);
  EXPECT_EQ(calls.v2, 0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(sub), 0x1u);
  EXPECT_EQ(holder, "untouched");
}

TEST(CuptiApi, LoadFromALibraryWithoutCuptiFailsNamingTheFunction) {
  void* self = dlopen(nullptr, RTLD_NOW);
  ASSERT_NE(self, nullptr);
  CuptiApi api;
  std::string error;
  EXPECT_FALSE(api.LoadFrom(self, &error));
  EXPECT_NE(error.find("cuptiSubscribe"), std::string::npos) << error;
  EXPECT_FALSE(api.loaded());
}

}  // namespace
}  // namespace numtrace::shim

#include "opd/device.h"

#include <gtest/gtest.h>

#include <string>
#include <unordered_set>

#include "error_text.h"
#include "opd/dispatch_key.h"
#include "opd/error.h"

namespace opd {
namespace {

using test_util::error_text;

std::string parse_error(const char* text) {
  return error_text<ValueError>([&] { Device d(text); });
}

TEST(Device, ParsesBuiltInTypes) {
  EXPECT_EQ(Device("cpu"), Device(DeviceType::CPU));
  EXPECT_EQ(Device("cpu:0"), Device(DeviceType::CPU, 0));
  EXPECT_EQ(Device("cuda"), Device(DeviceType::CUDA));
  EXPECT_EQ(Device("cuda:0"), Device(DeviceType::CUDA, 0));
  EXPECT_EQ(Device("cuda:12"), Device(DeviceType::CUDA, 12));
  EXPECT_EQ(Device("meta"), Device(DeviceType::Meta));
  EXPECT_EQ(Device("privateuseone:1"), Device(DeviceType::PrivateUse1, 1));

  Device d("cuda:3");
  EXPECT_EQ(d.type, DeviceType::CUDA);
  EXPECT_EQ(d.index, 3);
  EXPECT_TRUE(d.has_index());
  EXPECT_TRUE(d.is_cuda());
  EXPECT_FALSE(Device("meta").has_index());
}

TEST(Device, ConvertsImplicitlyFromText) {
  Device d = "cuda:1";
  EXPECT_EQ(d, Device(DeviceType::CUDA, 1));
  Device e = std::string("meta");
  EXPECT_TRUE(e.is_meta());
}

TEST(Device, StrRoundTrips) {
  for (const char* text : {"cpu", "cpu:0", "cuda", "cuda:0", "cuda:7", "meta", "meta:0"}) {
    EXPECT_EQ(Device(text).str(), text);
    EXPECT_EQ(Device(Device(text).str()), Device(text));
  }
  EXPECT_EQ(Device(DeviceType::CUDA, 0).str(), "cuda:0");
  EXPECT_EQ(fmt::format("{}", Device(DeviceType::Meta)), "meta");
}

TEST(Device, UnknownTypeNamesExpectedTypes) {
  EXPECT_EQ(parse_error("foo"),
            "Expected one of cpu, cuda, meta, privateuseone device type at start of device "
            "string: foo");
  EXPECT_EQ(parse_error("gpu:1"),
            "Expected one of cpu, cuda, meta, privateuseone device type at start of device "
            "string: gpu");
  EXPECT_THROW(Device("CPU"), ValueError);  // case-sensitive, as torch.device
}

TEST(Device, MalformedStringsAreRejected) {
  EXPECT_EQ(parse_error(""), "Device string must not be empty");
  for (const char* text :
       {"cuda:", "cuda:x", "cuda:01", ":0", "cuda:-1", "cu da", "cuda:1:2", "cuda0", "cuda:1 "}) {
    EXPECT_EQ(parse_error(text), fmt::format("Invalid device string: '{}'", text)) << text;
  }
  EXPECT_EQ(parse_error("cuda:128"),
            "Could not parse device index '128' in device string 'cuda:128'");
  EXPECT_EQ(parse_error("cuda:99999999999999"),
            "Could not parse device index '99999999999999' in device string 'cuda:99999999999999'");
}

TEST(Device, IndexIsValidated) {
  EXPECT_EQ(parse_error("cpu:1"), "CPU device index must be -1 or zero, got 1");
  EXPECT_EQ(error_text<ValueError>([] { Device(DeviceType::CPU, 2); }),
            "CPU device index must be -1 or zero, got 2");
  EXPECT_EQ(error_text<ValueError>([] { Device(DeviceType::CUDA, -2); }),
            "Device index must be -1 or non-negative, got -2");
}

TEST(Device, TypeNames) {
  EXPECT_STREQ(device_type_name(DeviceType::CPU), "cpu");
  EXPECT_STREQ(device_type_name(DeviceType::CUDA), "cuda");
  EXPECT_STREQ(device_type_name(DeviceType::Meta), "meta");
}

// One test, because the backend can be named once per process.
TEST(Device, PrivateUse1UsesTheRegisteredName) {
  EXPECT_STREQ(device_type_name(DeviceType::PrivateUse1), "privateuseone");
  EXPECT_EQ(Device(DeviceType::PrivateUse1, 0).str(), "privateuseone:0");
  EXPECT_THROW(Device("npu:0"), ValueError);

  register_privateuse1_backend("npu");
  EXPECT_STREQ(device_type_name(DeviceType::PrivateUse1), "npu");
  EXPECT_EQ(Device("npu:1"), Device(DeviceType::PrivateUse1, 1));
  EXPECT_EQ(Device("npu"), Device(DeviceType::PrivateUse1));
  EXPECT_EQ(Device(DeviceType::PrivateUse1, 0).str(), "npu:0");
  EXPECT_EQ(Device("privateuseone:2"), Device(DeviceType::PrivateUse1, 2));
  EXPECT_EQ(parse_error("xpu"),
            "Expected one of cpu, cuda, meta, privateuseone device type at start of device "
            "string: xpu");
}

TEST(Device, EqualityAndHash) {
  EXPECT_NE(Device("cuda:0"), Device("cuda:1"));
  EXPECT_NE(Device("cuda"), Device("cuda:0"));
  EXPECT_NE(Device("cpu"), Device("meta"));
  std::unordered_set<Device> set{Device("cpu"), Device("cuda:0"), Device("cuda:1"), Device("cpu")};
  EXPECT_EQ(set.size(), 3u);
  EXPECT_TRUE(set.count(Device(DeviceType::CUDA, 1)));
  EXPECT_NE(std::hash<Device>()(Device("cuda:0")), std::hash<Device>()(Device("cuda:1")));
}

}  // namespace
}  // namespace opd

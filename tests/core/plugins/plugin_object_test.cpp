// Objects handed out with a plugin's reference (plugin_api/include/opd/plugin_object.h): the
// object is destroyed before its owner is released, once, when the last copy goes; the in-place
// form keeps the object in the control block's allocation and survives a throwing constructor.

#include "opd/plugin_object.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace opd {
namespace {

// What happened, in order: "construct 7", "destroy 7", "owner released".
std::vector<std::string> events;

struct Owner {
  ~Owner() { events.push_back("owner released"); }
};

struct Widget {
  explicit Widget(int v, std::string tag) : value(v), name(std::move(tag)) {
    if (v < 0) throw std::invalid_argument("negative widget");
    events.push_back("construct " + std::to_string(v));
  }
  ~Widget() { events.push_back("destroy " + std::to_string(value)); }
  int value;
  std::string name;
};

class PluginObjectTest : public ::testing::Test {
 protected:
  void SetUp() override { events.clear(); }
};

TEST_F(PluginObjectTest, DestroysTheObjectThenReleasesTheOwner) {
  std::shared_ptr<Widget> a = make_plugin_shared(new Widget(1, "a"), std::make_shared<Owner>());
  std::shared_ptr<Widget> copy = a;
  a.reset();
  EXPECT_EQ(events, (std::vector<std::string>{"construct 1"}));
  copy.reset();
  EXPECT_EQ(events, (std::vector<std::string>{"construct 1", "destroy 1", "owner released"}));
}

TEST_F(PluginObjectTest, InPlaceObjectsAreConstructedInTheBlockAndDestroyedBeforeTheOwner) {
  std::shared_ptr<Widget> w =
      allocate_plugin_shared<Widget>(nullptr, std::make_shared<Owner>(), 7, std::string("seven"));
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->value, 7);
  EXPECT_EQ(w->name, "seven");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w.get()) % alignof(std::max_align_t), 0u);
  std::weak_ptr<Widget> weak = w;
  std::shared_ptr<void> as_void = w;
  w.reset();
  EXPECT_FALSE(weak.expired());
  as_void.reset();
  EXPECT_TRUE(weak.expired());
  EXPECT_EQ(events, (std::vector<std::string>{"construct 7", "destroy 7", "owner released"}));
}

TEST_F(PluginObjectTest, InPlaceObjectsUseTheGivenDestroyFunction) {
  static int destroyed = 0;
  destroyed = 0;
  auto destroy = [](void* p) {
    ++destroyed;
    static_cast<Widget*>(p)->~Widget();
  };
  allocate_plugin_shared<Widget>(destroy, nullptr, 3, std::string("three")).reset();
  EXPECT_EQ(destroyed, 1);
  EXPECT_EQ(events, (std::vector<std::string>{"construct 3", "destroy 3"}));
}

TEST_F(PluginObjectTest, AThrowingInPlaceConstructorDestroysNothingAndReleasesTheOwner) {
  auto owner = std::make_shared<Owner>();
  std::weak_ptr<Owner> watch = owner;
  EXPECT_THROW(allocate_plugin_shared<Widget>(nullptr, std::move(owner), -1, std::string("bad")),
               std::invalid_argument);
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(events, (std::vector<std::string>{"owner released"}));
}

}  // namespace
}  // namespace opd

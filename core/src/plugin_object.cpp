// See plugin_api/include/opd/plugin_object.h. Everything here is core code: the control block
// made by make_shared<Holder> is instantiated in libopd_core.so, so its disposal runs here.

#include "opd/plugin_object.h"

namespace opd {
namespace {

struct Holder {
  Holder(void* o, void (*d)(void*), std::shared_ptr<void> w)
      : object(o), destroy(d), owner(std::move(w)) {}
  Holder(const Holder&) = delete;
  Holder& operator=(const Holder&) = delete;
  void* object;
  void (*destroy)(void*);
  std::shared_ptr<void> owner;
  ~Holder() {
    destroy(object);
    owner.reset();  // only now may the plugin that provided `destroy` go away
  }
};

}  // namespace

std::shared_ptr<void> make_plugin_object(void* object, void (*destroy)(void*),
                                         std::shared_ptr<void> owner) {
  auto holder = std::make_shared<Holder>(object, destroy, std::move(owner));
  return std::shared_ptr<void>(std::move(holder), object);
}

}  // namespace opd

// The out-of-line members of OperatorHandle (plugin_api/include/opd/operator_handle.h): plugins
// reach an operator only through these, so the entry's layout is the core's own.

#include "opd/operator_handle.h"

#include "opd/dispatcher.h"

namespace opd {

const OperatorName& OperatorHandle::operator_name() const { return entry_->operator_name(); }
bool OperatorHandle::has_schema() const { return entry_->has_schema(); }
const FunctionSchema& OperatorHandle::schema() const { return entry_->schema(); }
std::string OperatorHandle::schema_string() const { return entry_->schema().to_string(); }
std::string OperatorHandle::debug() const { return entry_->schema_debug(); }
size_t OperatorHandle::num_arguments() const { return entry_->schema().arguments().size(); }
size_t OperatorHandle::num_returns() const { return entry_->schema().returns().size(); }
bool OperatorHandle::argument_is_written(size_t i) const {
  return entry_->schema().arguments().at(i).is_write();
}
bool OperatorHandle::return_is_written(size_t i) const {
  return entry_->schema().returns().at(i).is_write();
}
bool OperatorHandle::has_kernel_for_dispatch_key(DispatchKey k) const {
  return entry_->has_kernel_for_dispatch_key(k);
}
bool OperatorHandle::has_tag(Tag tag) const { return entry_->tags().has(tag); }
TagSet OperatorHandle::tags() const { return entry_->tags(); }
std::string OperatorHandle::dump_state() const { return entry_->dump_state(); }
std::string OperatorHandle::dump_computed_table() const { return entry_->dump_computed_table(); }

std::optional<OperatorHandle> find_operator(std::string_view name, std::string_view overload) {
  return Dispatcher::singleton().find_schema(
      OperatorName(std::string(name), std::string(overload)));
}

OperatorHandle find_operator_or_throw(std::string_view name, std::string_view overload) {
  return Dispatcher::singleton().find_schema_or_throw(name, overload);
}

}  // namespace opd

#pragma once

// Overload resolution for `opd eval` and the Python package: from a name and Python-like
// arguments to one operator and the boxed stack for it, as PyTorch's Python argument parser does,
// driven by schemas only.
//
// Order of overloads: see Note [Overload order] in binding.cpp. Argument conversions, as
// python_arg_parser.cpp: an int fits int, SymInt, float, complex and Scalar; a float fits float,
// complex and Scalar; a bool fits bool and Scalar (never int); a number fits Tensor only where
// torch allows it (allows_numbers_as_tensors: as a wrapped number, once every overload refused
// it as a number); a list of ints fits int[] and SymInt[]; int[N] also takes a bare int
// (repeated N times); a str fits str, Device ("cpu", "meta", "cuda:1") and Dimname; None fits
// any optional type.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opd/device.h"
#include "opd/dispatcher.h"
#include "opd/function_schema.h"
#include "opd/ivalue.h"
#include "opd/scalar_type.h"

namespace opd::bind {

struct CallArgs {
  std::vector<IValue> positional;
  std::vector<std::pair<std::string, IValue>> keywords;
  // A method call (x.view(2, 3)): positional[0] is the tensor it was called on, and an int
  // list argument right after it takes varargs, as torch's Tensor methods do.
  bool self_bound = false;
};

// --device / --dtype: passed as device= / dtype= to factory functions (operators with a
// `device` or `dtype` argument and no tensor argument) when the call does not give them.
struct FactoryDefaults {
  std::optional<Device> device;
  std::optional<ScalarType> dtype;
};

struct BoundCall {
  OperatorHandle op;
  // op's schema, read once: valid for as long as the caller's dispatcher call scope lasts, even
  // if another thread undoes the def meanwhile (the Python package binds and calls in one).
  const FunctionSchema* schema;
  Stack stack;  // the schema's arguments, in order
};

// The operators `name` may mean, in the order they are tried: "aten::add.Tensor" (one
// overload), "add.Tensor" (aten, else the only namespace that has it), "add" (every overload,
// aten first). A leading "torch." is ignored; ".default" names the overload "". Throws
// opd::ValueError "opd eval: unknown operator 'foo'" when nothing matches, naming the
// namespaces when an unqualified name is ambiguous.
std::vector<OperatorHandle> resolve_operator(std::string_view name);

// Binds `args` to the first overload that accepts them. Throws opd::TypeError otherwise: with
// one candidate, why it failed ("aten::relu(): argument 'self' (position 1) must be Tensor, not
// int"); with several, PyTorch's "add() received an invalid combination of arguments - got
// (Tensor, str), but expected one of:" followed by every candidate schema.
BoundCall bind_call(std::string_view name, const CallArgs& args, const FactoryDefaults& defaults);

// The same over given candidates (in Note [Overload order]'s order, as resolve_operator returns
// them), `name` being what the errors call them ("add"): the Python package's packets. A
// candidate whose def was undone since it was looked up is skipped; none left is an Error
// "operator ns::name is not defined (any more)". REQUIRES: candidates is not empty.
BoundCall bind_to_overloads(std::span<const OperatorHandle> candidates, std::string_view name,
                            const CallArgs& args, const FactoryDefaults& defaults);

// Binds `args` to `schema`; nullopt when they do not fit, with `*why` set unless `why` is null.
// `numbers_as_tensors`: a number given for a Tensor (or Tensor?) argument becomes a wrapped
// number, as torch's parser does for add, sub, mul, div... (Note [Numbers as tensors]).
std::optional<Stack> try_bind(const FunctionSchema& schema, const CallArgs& args,
                              const FactoryDefaults& defaults, std::string* why,
                              bool numbers_as_tensors = false);

// Whether torch's Python API takes a number for a Tensor argument of this operator: the aten
// arithmetic operators (add, sub, mul, div, true_divide, floor_divide, their aliases and
// in-place forms), to, _to_copy, copy_ and _conj.
bool allows_numbers_as_tensors(const FunctionSchema& schema);

// `v` converted to what an argument of type `type` (fixed list size N) takes, or nullopt; with
// `numbers_as_tensors`, a number for a Tensor is a wrapped number (tensor_values.h).
std::optional<IValue> convert_argument(const IValue& v, const Type& type, std::optional<int64_t> N,
                                       bool numbers_as_tensors = false);

// The value of a schema default for an argument of `type`: "int[2] stride=1" -> [1, 1],
// "ScalarType dtype=float" -> Float32, "int reduction=Mean" -> 1.
IValue default_argument(const DefaultValue& d, const Type& type);

// Calls an operator through the dispatcher, boxed, with Python-like arguments; returns its
// single result. Throws as bind_call and the operator do.
IValue call_operator(std::string_view name, std::vector<IValue> positional,
                     std::vector<std::pair<std::string, IValue>> keywords);

// Python's name for the type of a value, as PyTorch's errors print it: Tensor, int, float,
// bool, complex, str, NoneType, list of [int, int], torch.dtype, torch.device, tuple.
std::string python_type_name(const IValue& v);

}  // namespace opd::bind

// tensor_repr: PyTorch's torch/_tensor_str.py (_Formatter, _tensor_str, _str_intern) with the
// default print options, on values read back to the host.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "opd/autograd.h"
#include "opd/bind/print.h"
#include "opd/bind/tensor_values.h"

namespace opd::bind {
namespace {

constexpr int kPrecision = 4;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr size_t kLineWidth = 80;

// Python's "{:.Nf}" / "{:.Ne}": printf, except that non-finite values print as nan, inf, -inf
// (printf may print "-nan").
std::string py_format(double v, char conversion, int precision) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char fmt_spec[8] = {'%', '.', static_cast<char>('0' + precision), conversion, '\0'};
  char buf[512];
  std::snprintf(buf, sizeof(buf), fmt_spec, v);
  return buf;
}

std::string pad_left(std::string s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// _Formatter: decides, from every value that will be shown, between integer, fixed and
// scientific notation and the common width.
class Formatter {
 public:
  // Integers and bools: their Python text, right-aligned.
  explicit Formatter(const std::vector<std::string>& texts) : floating_(false) {
    for (const auto& s : texts) width_ = std::max(width_, s.size());
  }
  explicit Formatter(const std::vector<double>& values) : floating_(true) {
    std::vector<double> nonzero_finite;
    for (double v : values) {
      if (std::isfinite(v) && v != 0) nonzero_finite.push_back(v);
    }
    if (nonzero_finite.empty()) return;
    double min = std::abs(nonzero_finite[0]), max = min;
    for (double v : nonzero_finite) {
      min = std::min(min, std::abs(v));
      max = std::max(max, std::abs(v));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    if (int_mode_) {
      if (max / min > 1000.0 || max > 1.0e8) {
        sci_mode_ = true;
        for (double v : nonzero_finite) widen(py_format(v, 'e', kPrecision).size());
      } else {
        for (double v : nonzero_finite) widen(py_format(v, 'f', 0).size() + 1);
      }
    } else {
      sci_mode_ = max / min > 1000.0 || max > 1.0e8 || min < 1.0e-4;
      for (double v : nonzero_finite) {
        widen(py_format(v, sci_mode_ ? 'e' : 'f', kPrecision).size());
      }
    }
  }

  size_t width() const { return width_; }

  std::string format(const std::string& text) const { return pad_left(text, width_); }
  std::string format(double v) const {
    std::string s;
    if (sci_mode_) {
      s = py_format(v, 'e', kPrecision);
    } else if (int_mode_) {
      s = py_format(v, 'f', 0);
      if (std::isfinite(v)) s += ".";
    } else {
      s = py_format(v, 'f', kPrecision);
    }
    return pad_left(std::move(s), width_);
  }

 private:
  void widen(size_t w) { width_ = std::max(width_, w); }
  bool floating_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t width_ = 1;
};

std::string int_text(const HostValues& h, int64_t i) {
  if (h.kind == HostValues::Kind::Bool) return h.ints[i] ? "True" : "False";
  return std::to_string(h.ints[i]);
}

// A sub-tensor of the row-major values: dimensions from `dim` on, starting at `offset`.
struct View {
  const HostValues* h;
  size_t dim;
  int64_t offset;

  int64_t ndim() const { return static_cast<int64_t>(h->sizes.size() - dim); }
  int64_t size() const { return h->sizes[dim]; }
  View at(int64_t i) const {
    int64_t stride = 1;
    for (size_t d = dim + 1; d < h->sizes.size(); ++d) stride *= h->sizes[d];
    return {h, dim + 1, offset + i * stride};
  }
};

// get_summarized_data: the elements that are shown, in order.
void summarized(const View& v, bool summarize, std::vector<int64_t>* out) {
  if (v.ndim() == 0) {
    out->push_back(v.offset);
    return;
  }
  auto take = [&](int64_t i) {
    if (v.ndim() == 1) {
      out->push_back(v.at(i).offset);
    } else {
      summarized(v.at(i), summarize, out);
    }
  };
  if (summarize && v.size() > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) take(i);
    for (int64_t i = v.size() - kEdgeItems; i < v.size(); ++i) take(i);
  } else {
    for (int64_t i = 0; i < v.size(); ++i) take(i);
  }
}

class Printer {
 public:
  Printer(const HostValues& h, bool summarize) : h_(h), summarize_(summarize) {
    std::vector<int64_t> shown;
    summarized(View{&h, 0, 0}, summarize, &shown);
    if (h.kind == HostValues::Kind::Float || h.kind == HostValues::Kind::Complex) {
      std::vector<double> reals, imags;
      for (int64_t i : shown) {
        reals.push_back(h.reals[i]);
        if (h.kind == HostValues::Kind::Complex) imags.push_back(h.imags[i]);
      }
      real_.emplace(reals);
      if (h.kind == HostValues::Kind::Complex) imag_.emplace(imags);
    } else {
      std::vector<std::string> texts;
      for (int64_t i : shown) texts.push_back(int_text(h, i));
      real_.emplace(texts);
    }
  }

  // _tensor_str_with_formatter.
  std::string str(const View& v, size_t indent) const {
    if (v.ndim() == 0) return value(v.offset);
    if (v.ndim() == 1) return vector(v, indent);
    std::vector<std::string> slices;
    if (summarize_ && v.size() > 2 * kEdgeItems) {
      for (int64_t i = 0; i < kEdgeItems; ++i) slices.push_back(str(v.at(i), indent + 1));
      slices.push_back("...");
      for (int64_t i = v.size() - kEdgeItems; i < v.size(); ++i) {
        slices.push_back(str(v.at(i), indent + 1));
      }
    } else {
      for (int64_t i = 0; i < v.size(); ++i) slices.push_back(str(v.at(i), indent + 1));
    }
    std::string sep =
        "," + std::string(static_cast<size_t>(v.ndim() - 1), '\n') + std::string(indent + 1, ' ');
    return "[" + join(slices, sep) + "]";
  }

 private:
  static std::string join(const std::vector<std::string>& parts, const std::string& sep) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
    return out;
  }

  std::string value(int64_t i) const {
    if (!imag_) {
      return h_.kind == HostValues::Kind::Float ? real_->format(h_.reals[i])
                                                : real_->format(int_text(h_, i));
    }
    std::string re = real_->format(h_.reals[i]);
    std::string im = imag_->format(h_.imags[i]) + "j";
    im.erase(0, im.find_first_not_of(' '));
    return im[0] == '+' || im[0] == '-' ? re + im : re + "+" + im;
  }

  // _vector_str.
  std::string vector(const View& v, size_t indent) const {
    size_t element_length = real_->width() + 2;
    if (imag_) element_length += imag_->width() + 1;
    size_t per_line =
        std::max<size_t>(1, indent >= kLineWidth ? 0 : (kLineWidth - indent) / element_length);
    std::vector<std::string> data;
    if (summarize_ && v.size() > 2 * kEdgeItems) {
      for (int64_t i = 0; i < kEdgeItems; ++i) data.push_back(value(v.at(i).offset));
      data.push_back(" ...");
      for (int64_t i = v.size() - kEdgeItems; i < v.size(); ++i) {
        data.push_back(value(v.at(i).offset));
      }
    } else {
      for (int64_t i = 0; i < v.size(); ++i) data.push_back(value(v.at(i).offset));
    }
    std::vector<std::string> lines;
    for (size_t i = 0; i < data.size(); i += per_line) {
      std::vector<std::string> line(data.begin() + i,
                                    data.begin() + std::min(data.size(), i + per_line));
      lines.push_back(join(line, ", "));
    }
    return "[" + join(lines, ",\n" + std::string(indent + 1, ' ')) + "]";
  }

  const HostValues& h_;
  bool summarize_;
  std::optional<Formatter> real_, imag_;
};

std::string size_tuple(IntArrayRef sizes) {
  if (sizes.size() == 1) return fmt::format("({},)", sizes[0]);
  return fmt::format("({})", fmt::join(sizes, ", "));
}

// _add_suffixes.
std::string add_suffixes(const std::string& body, const std::vector<std::string>& suffixes,
                         size_t indent) {
  std::string out = body;
  size_t newline = body.rfind('\n');
  // Python's len(s) - s.rfind("\n") + 1, where rfind gives -1 when there is no newline.
  size_t last_line_len = newline == std::string::npos ? body.size() + 2 : body.size() - newline + 1;
  for (const auto& suffix : suffixes) {
    if (last_line_len + suffix.size() + 2 > kLineWidth) {
      out += ",\n" + std::string(indent, ' ') + suffix;
      last_line_len = indent + suffix.size();
    } else {
      out += ", " + suffix;
      last_line_len += suffix.size() + 2;
    }
  }
  return out + ")";
}

std::string dtype_suffix(ScalarType t, std::string_view module) {
  return fmt::format("dtype={}.{}", module, python_name(t));
}

}  // namespace

std::string tensor_repr(const Tensor& t, std::string_view module) {
  if (!t.defined()) return "None";
  const std::string prefix = "tensor(";
  const size_t indent = prefix.size();
  std::vector<std::string> suffixes;
  if (!t.is_cpu()) suffixes.push_back(fmt::format("device='{}'", t.device().str()));
  ScalarType dtype = t.dtype();
  bool has_default_dtype =
      dtype == kFloat || dtype == kComplexFloat || dtype == kLong || dtype == kBool;
  std::string body;
  if (t.is_meta()) {
    suffixes.push_back("size=" + size_tuple(t.sizes()));
    if (dtype != kFloat) suffixes.push_back(dtype_suffix(dtype, module));
    body = "...";
  } else if (t.numel() == 0) {
    if (t.dim() != 1) suffixes.push_back("size=" + size_tuple(t.sizes()));
    if (dtype != kFloat) suffixes.push_back(dtype_suffix(dtype, module));
    body = "[]";
  } else {
    if (!has_default_dtype) suffixes.push_back(dtype_suffix(dtype, module));
    HostValues h = read_values(t);
    Printer printer(h, h.numel() > kThreshold);
    body = printer.str(View{&h, 0, 0}, indent);
  }
  // As PyTorch: the node that made it, or for a leaf that needs one, that it requires grad. Only
  // the autograd plugin gives tensors autograd state (and answers these questions).
  if (t.unsafe_get_impl()->autograd_meta() && t.requires_grad()) {
    const std::string fn = autograd::grad_fn_name(t);
    suffixes.push_back(fn.empty() ? "requires_grad=True" : "grad_fn=<" + fn + ">");
  }
  return add_suffixes(prefix + body, suffixes, indent);
}

}  // namespace opd::bind

// einsum as PyTorch's CompositeImplicitAutograd: the equation's operands are aligned to one
// dimension order (output labels, then contracted ones), a repeated label taking a diagonal
// (diagonal, then movedim), and then contracted pairwise, left to right (or in `path`'s order),
// each pair through one bmm (sum_product_pair); a contracted label that no other remaining
// operand has is summed away before the product.

#include <array>
#include <deque>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

constexpr int kLetters = 26;
constexpr int kLabels = 2 * kLetters;
constexpr int kEllipsis = kLabels;  // the label "..." stands for in an operand's list

bool is_subscript(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// 'A'..'Z' are labels 0..25, 'a'..'z' 26..51: the output's implicit order is this one.
int label_of(char c) { return c <= 'Z' ? c - 'A' : c - 'a' + kLetters; }

char subscript_of(int label) {
  return static_cast<char>(label < kLetters ? 'A' + label : 'a' + label - kLetters);
}

int64_t product(const std::vector<int64_t>& sizes) {
  return std::accumulate(sizes.begin(), sizes.end(), int64_t{1}, std::multiplies<>());
}

// The diagonal over dimensions `keep` and `drop` (equal sizes, keep < drop) as a view of `op`,
// in place of dimension `keep`: PyTorch's op.diagonal(0, keep, drop).movedim(-1, keep). Through
// diagonal and movedim, not an as_strided of op's strides: as_strided's backward treats op's
// storage as the input, so an expanded operand (stride 0) would share each gradient between the
// elements that alias one memory slot, where diagonal's backward gives each its own.
Tensor diagonal_into(const Tensor& op, int64_t keep, int64_t drop) {
  return movedim(diagonal(op, 0, keep, drop), -1, keep);
}

// sum over `sum_dims` of left * right (both of the same rank, broadcasting), keeping every
// dimension (the summed ones as size 1), through one bmm: each dimension is a batch one (both
// sides larger than 1), left's, right's, or summed.
Tensor sum_product_pair(Tensor left, Tensor right, const std::vector<bool>& summed) {
  const int64_t ndim = left.dim();
  std::vector<int64_t> batch, lo, ro, sum;
  for (int64_t d = 0; d < ndim; ++d) {
    const bool l = left.size(d) != 1, r = right.size(d) != 1;
    if (summed[d]) {
      if (l && r) {
        sum.push_back(d);
      } else if (l) {
        left = left.sum(IntArrayRef{d}, true);
        lo.push_back(d);
      } else if (r) {
        right = right.sum(IntArrayRef{d}, true);
        lo.push_back(d);
      } else {
        lo.push_back(d);
      }
    } else if (l && r) {
      batch.push_back(d);
    } else if (r) {
      ro.push_back(d);
    } else {
      lo.push_back(d);
    }
  }
  auto sizes_of = [](const Tensor& t, const std::vector<int64_t>& dims) {
    std::vector<int64_t> s;
    for (int64_t d : dims) s.push_back(t.size(d));
    return s;
  };
  const std::vector<int64_t> batch_sizes = sizes_of(left, batch), lo_sizes = sizes_of(left, lo),
                             ro_sizes = sizes_of(right, ro), sum_sizes = sizes_of(left, sum);
  const int64_t b = product(batch_sizes), l = product(lo_sizes), r = product(ro_sizes),
                s = product(sum_sizes);

  std::vector<int64_t> left_order = batch;
  left_order.insert(left_order.end(), lo.begin(), lo.end());
  left_order.insert(left_order.end(), sum.begin(), sum.end());
  left_order.insert(left_order.end(), ro.begin(), ro.end());
  std::vector<int64_t> right_order = batch;
  right_order.insert(right_order.end(), sum.begin(), sum.end());
  right_order.insert(right_order.end(), ro.begin(), ro.end());
  right_order.insert(right_order.end(), lo.begin(), lo.end());

  const Tensor lhs = left.permute(left_order).reshape({b, l, s});
  const Tensor rhs = right.permute(right_order).reshape({b, s, r});
  // The result in left_order's dimension order (summed ones of size 1), then back.
  std::vector<int64_t> result_sizes = batch_sizes;
  result_sizes.insert(result_sizes.end(), lo_sizes.begin(), lo_sizes.end());
  result_sizes.insert(result_sizes.end(), sum.size(), 1);
  result_sizes.insert(result_sizes.end(), ro_sizes.begin(), ro_sizes.end());
  std::vector<int64_t> inverse(ndim);
  for (int64_t i = 0; i < ndim; ++i) inverse[left_order[i]] = i;
  return opd::bmm(lhs, rhs).view(result_sizes).permute(inverse);
}

}  // namespace

Tensor einsum(std::string_view equation, TensorList tensors, OptionalIntArrayRef path) {
  OPD_CHECK(!tensors.empty(), "einsum(): must provide at least one operand");
  const size_t num_ops = tensors.size();
  const size_t arrow = equation.find("->");
  const std::string_view lhs = equation.substr(0, arrow);

  // Each operand's labels.
  std::vector<std::vector<int>> op_labels(num_ops);
  bool found_ellipsis = false;
  size_t current = 0;
  for (size_t i = 0; i < lhs.size(); ++i) {
    const char c = lhs[i];
    if (c == ' ') continue;
    if (c == '.') {
      OPD_CHECK(!found_ellipsis,
                "einsum(): found '.' for operand {} for which an ellipsis was already found",
                current);
      OPD_CHECK(i + 2 < lhs.size() && lhs[++i] == '.' && lhs[++i] == '.',
                "einsum(): found '.' for operand {} that is not part of any ellipsis", current);
      op_labels[current].push_back(kEllipsis);
      found_ellipsis = true;
    } else if (c == ',') {
      ++current;
      OPD_CHECK(current < num_ops,
                "einsum(): fewer operands were provided than specified in the equation");
      found_ellipsis = false;
    } else {
      OPD_CHECK(is_subscript(c),
                "einsum(): invalid subscript given at index {} in the equation string, "
                "subscripts must be in [a-zA-Z]",
                i);
      op_labels[current].push_back(label_of(c));
    }
  }
  OPD_CHECK(current == num_ops - 1,
            "einsum(): more operands were provided than specified in the equation");

  // How often each label appears, and how many dimensions the ellipsis covers.
  std::array<int64_t, kLabels> label_count{};
  int64_t ell_num_dim = 0;
  for (size_t i = 0; i < num_ops; ++i) {
    const int64_t ndims = tensors[i].dim();
    int64_t nlabels = static_cast<int64_t>(op_labels[i].size());
    bool has_ellipsis = false;
    for (int label : op_labels[i]) {
      if (label == kEllipsis) {
        --nlabels;
        has_ellipsis = true;
        ell_num_dim = std::max(ell_num_dim, ndims - nlabels);
      } else {
        ++label_count[label];
      }
    }
    OPD_CHECK(has_ellipsis ? nlabels <= ndims : nlabels == ndims,
              "einsum(): the number of subscripts in the equation ({}) does not match the number "
              "of dimensions ({}) for operand {}{}",
              nlabels, ndims, i, has_ellipsis ? "" : " and no ellipsis was given");
  }

  // Every label's position in the aligned order: the output's first, then the contracted.
  std::array<int64_t, kLabels> label_index;
  label_index.fill(-1);
  int64_t index = 0;
  int64_t ell_index = 0;
  found_ellipsis = false;
  if (arrow == std::string_view::npos) {
    // Implicit output: the ellipsis, then the labels seen once, in alphabetical order.
    index = ell_num_dim;
    found_ellipsis = true;
    for (int label = 0; label < kLabels; ++label) {
      if (label_count[label] == 1) label_index[label] = index++;
    }
  } else {
    const std::string_view rhs = equation.substr(arrow + 2);
    for (size_t i = 0; i < rhs.size(); ++i) {
      const char c = rhs[i];
      if (c == ' ') continue;
      if (c == '.') {
        OPD_CHECK(!found_ellipsis,
                  "einsum(): found '.' for output but an ellipsis (...) was already found");
        OPD_CHECK(i + 2 < rhs.size() && rhs[++i] == '.' && rhs[++i] == '.',
                  "einsum(): found '.' for output that is not part of any ellipsis (...)");
        ell_index = index;
        index += ell_num_dim;
        found_ellipsis = true;
        continue;
      }
      OPD_CHECK(is_subscript(c),
                "einsum(): invalid subscript given at index {} in the equation string, "
                "subscripts must be in [a-zA-Z]",
                lhs.size() + 2 + i);
      const int label = label_of(c);
      OPD_CHECK(label_count[label] > 0 && label_index[label] == -1,
                "einsum(): output subscript {}{}", c,
                label_index[label] > -1 ? " appears more than once in the output"
                                        : " does not appear in the equation for any input operand");
      label_index[label] = index++;
    }
  }
  const int64_t out_size = index;
  if (!found_ellipsis) {
    ell_index = index;
    index += ell_num_dim;
  }
  for (int label = 0; label < kLabels; ++label) {
    if (label_count[label] > 0 && label_index[label] == -1) label_index[label] = index++;
  }
  const int64_t ndim = index;

  // Align every operand to the `ndim` dimensions: check sizes, take diagonals, unsqueeze
  // missing labels, permute. dim_counts[d]: how many operands have d larger than 1.
  std::array<int64_t, kLabels> label_size;
  label_size.fill(1);
  std::vector<int64_t> ell_sizes(ell_num_dim, 1);
  std::vector<int64_t> dim_counts(ndim, 0);
  std::deque<Tensor> ops;
  for (size_t i = 0; i < num_ops; ++i) {
    Tensor op = tensors[i];
    std::vector<int64_t> permutation(ndim, -1);
    int64_t dim = 0;
    for (int label : op_labels[i]) {
      if (label == kEllipsis) {
        const int64_t covered = tensors[i].dim() - (static_cast<int64_t>(op_labels[i].size()) - 1);
        for (int64_t j = ell_num_dim - covered; j < ell_num_dim; ++j) {
          if (op.size(dim) != 1) {
            OPD_CHECK(ell_sizes[j] == 1 || ell_sizes[j] == op.size(dim),
                      "einsum(): dimension {} covered by ellipsis in operand {}has size {} which "
                      "does not broadcast with previously seen ellipsis with size {} for the "
                      "respective dimension",
                      dim, i, op.size(dim), ell_sizes[j]);
            ell_sizes[j] = op.size(dim);
            ++dim_counts[ell_index + j];
          }
          permutation[ell_index + j] = dim++;
        }
      } else if (permutation[label_index[label]] == -1) {
        if (op.size(dim) != 1) {
          OPD_CHECK(label_size[label] == 1 || label_size[label] == op.size(dim),
                    "einsum(): subscript {} has size {} for operand {} which does not broadcast "
                    "with previously seen size {}",
                    subscript_of(label), op.size(dim), i, label_size[label]);
          label_size[label] = op.size(dim);
          ++dim_counts[label_index[label]];
        }
        permutation[label_index[label]] = dim++;
      } else {
        const int64_t previous = permutation[label_index[label]];
        OPD_CHECK(op.size(dim) == op.size(previous),
                  "einsum(): subscript {} is repeated for operand {} but the sizes don't match, "
                  "{} != {}",
                  subscript_of(label), i, op.size(dim), op.size(previous));
        op = diagonal_into(op, previous, dim);
      }
    }
    for (int64_t& p : permutation) {
      if (p == -1) {
        op = op.unsqueeze(dim);
        p = dim++;
      }
    }
    ops.push_back(op.permute(permutation));
  }

  std::vector<int64_t> order;
  if (path.has_value()) order.assign(path->begin(), path->end());
  size_t step = 0;
  while (ops.size() > 1) {
    int64_t i = 0, j = 1;
    if (path.has_value()) {
      OPD_CHECK(step + 1 < order.size(), "einsum(): path must have two entries per contraction");
      i = order[step++];
      j = order[step++];
      if (j < i) std::swap(i, j);
      OPD_CHECK(
          i != j && i >= 0 && j < static_cast<int64_t>(ops.size()),
          "einsum(): invalid contraction ({}, {}{}", i, j,
          i == j ? ") cannot contract an operand with itself" : ") operand index is out of bounds");
    }
    Tensor a = ops[i], b = ops[j];
    ops.erase(ops.begin() + j);
    ops.erase(ops.begin() + i);
    // A contracted dimension is summed in this product when no other operand still has it.
    std::vector<bool> summed(ndim, false);
    for (int64_t d = out_size; d < ndim; ++d) {
      const int64_t here = (a.size(d) != 1) + (b.size(d) != 1);
      if (here > 0 && dim_counts[d] == here) {
        summed[d] = true;
        dim_counts[d] = 0;
      } else if (here == 2) {
        --dim_counts[d];  // the product has it once from now on
      }
    }
    Tensor result = sum_product_pair(a, b, summed);
    if (path.has_value()) {
      ops.push_back(result);
    } else {
      ops.push_front(result);
    }
  }

  if (ndim == out_size) return ops[0];
  std::vector<int64_t> sum_dims(ndim - out_size);
  std::iota(sum_dims.begin(), sum_dims.end(), out_size);
  if (num_ops > 1) {
    // Contracted dimensions are all of size 1 by now.
    std::vector<int64_t> sizes(ops[0].sizes().begin(), ops[0].sizes().begin() + out_size);
    return ops[0].reshape(sizes);
  }
  return ops[0].sum(sum_dims);
}

}  // namespace opd::native

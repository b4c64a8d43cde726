#include "common/upsample_shape.h"

#include "common/output.h"
#include "common/type_dispatch.h"
#include "opd/error.h"

namespace opd::common {

std::vector<int64_t> upsample_2d_output_sizes(IntArrayRef input_size, IntArrayRef output_size) {
  OPD_CHECK(output_size.size() == 2, "It is expected output_size equals to 2, but got size {}",
            output_size.size());
  OPD_CHECK(input_size.size() == 4, "It is expected input_size equals to 4, but got size {}",
            input_size.size());
  const int64_t h = input_size[2], w = input_size[3], oh = output_size[0], ow = output_size[1];
  OPD_CHECK(h > 0 && w > 0 && oh > 0 && ow > 0,
            "Input and output sizes should be greater than 0, but got input (H: {}, W: {}) output "
            "(H: {}, W: {})",
            h, w, oh, ow);
  return {input_size[0], input_size[1], oh, ow};
}

std::vector<int64_t> upsample_2d_meta(const Tensor& input, IntArrayRef output_size,
                                      const char* dtype_name, bool with_byte) {
  std::vector<int64_t> sizes = upsample_2d_output_sizes(input.sizes(), output_size);
  OPD_CHECK(input.numel() != 0 || input.size(1) * input.size(2) * input.size(3) != 0,
            "Non-empty 4D data tensor expected but got a tensor with sizes {}",
            shape_str(input.sizes()));
  const TypeSet types = TypeSet::Floating.with(kBFloat16);
  check_dtype_in(dtype_name, input.scalar_type(), with_byte ? types.with(kByte) : types);
  return sizes;
}

void upsample_2d_backward_meta(const Tensor& grad_output, IntArrayRef output_size,
                               IntArrayRef input_size, const char* op) {
  const std::vector<int64_t> full = upsample_2d_output_sizes(input_size, output_size);
  OPD_CHECK(grad_output.dim() == 4,
            "Expected grad_output to be a tensor of dimension 4 but got: dimension {}",
            grad_output.dim());
  for (int64_t i = 0; i < 4; ++i)
    OPD_CHECK(grad_output.size(i) == full[i],
              "Expected grad_output to have the same shape as output; output.size({}) = {} but got "
              "grad_output.size({}) = {}",
              i, full[i], i, grad_output.size(i));
  check_dtype_in(op, grad_output.scalar_type(), TypeSet::Floating.with(kBFloat16));
}

}  // namespace opd::common

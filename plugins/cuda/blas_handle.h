#pragma once

// cuBLAS handles: one per thread and device, created on first use and bound to the thread's
// current stream on every call.

#include <cublas_v2.h>

namespace opd::cuda {

// The handle of device `index` (the current device must be `index`), set to current_stream(index).
cublasHandle_t blas_handle(int index);

// Destroys every handle (plugin shutdown).
void destroy_blas_handles() noexcept;

}  // namespace opd::cuda

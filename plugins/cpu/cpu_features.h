#pragma once

// The run-time CPU check before a call into a file compiled for AVX2 (unary_vec_avx2.cpp,
// reduce_vec_avx2.cpp): the rest of the plugin is compiled for baseline x86-64, and only calls
// into those files once this says the CPU has the instructions they were compiled with.
// Those files must not include this header (an inline function compiled there with -mavx2 could
// be the copy the linker keeps).

namespace opd::cpu {

// Whether the CPU has AVX2 and FMA.
inline bool has_avx2_fma() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}

}  // namespace opd::cpu

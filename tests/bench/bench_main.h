#pragma once

// What bench_main.cpp gives the benchmark files besides the ratios (ratios.h): the smoke mode
// and a suite's requirement of the machine.

#include <functional>
#include <string>

namespace opd::bench {

// True under --opd_bench_smoke (`opd bench --smoke`): each case proves it runs, not how fast.
// Google Benchmark's own flags shorten the timed loops; a case that sets its own duration or
// iteration count (a throughput measured over seconds) shortens it when this is true.
bool smoke();

// The binary's cases need what `unavailable` looks for: it returns "" when they can run, or why
// not. Without it, main prints one line ("<suite> suite skipped: <why>") and runs no case,
// instead of every case reporting the same error. For a binary holding one suite only (the CUDA
// cases, opd_bench_cuda).
void require_for_suite(std::string suite, std::function<std::string()> unavailable);

}  // namespace opd::bench

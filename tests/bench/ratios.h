#pragma once

#include <string>

namespace opd::bench {

// Declares that the benchmark `name`'s time divided by `reference`'s is reported after the run,
// with the goal (e.g. "<= 1.2"). Both must run in the same process, so the ratio is measured
// under the same machine load.
void add_ratio(std::string name, std::string reference, std::string goal);

}  // namespace opd::bench

#pragma once

#include <string>

namespace opd::bench {

// Declares that the benchmark `name`'s time divided by `reference`'s is reported after the run,
// with the goal (e.g. "<= 1.2"). Both must run in the same process, so the ratio is measured
// under the same machine load.
void add_ratio(std::string name, std::string reference, std::string goal);

// As add_ratio, of what each costs above its baseline, a benchmark of the same case without the
// part being compared: (name - name_baseline) / (reference - reference_baseline).
void add_ratio_over_baselines(std::string name, std::string name_baseline, std::string reference,
                              std::string reference_baseline, std::string goal);

}  // namespace opd::bench

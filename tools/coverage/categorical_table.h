// The categorical section of docs/coverage.md (written by deniable-coverage-table).
#ifndef DENIABLE_TOOLS_COVERAGE_CATEGORICAL_TABLE_H_
#define DENIABLE_TOOLS_COVERAGE_CATEGORICAL_TABLE_H_

namespace deniable::tools {

// Prints, as Markdown, the simultaneous coverage of the categorical intervals
// (common/categorical_estimate.h) for k-RR (exact) and OUE / OLH (seeded Monte Carlo), beside
// the unadjusted per-category intervals. Returns false (after a message on stderr) on error.
bool PrintCategoricalCoverage();

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_COVERAGE_CATEGORICAL_TABLE_H_

// Test helpers shared by the categorical tests of common/.
#ifndef DENIABLE_COMMON_CATEGORICAL_TEST_UTIL_H_
#define DENIABLE_COMMON_CATEGORICAL_TEST_UTIL_H_

#include "deniable/common/categorical.h"

namespace deniable::testing_util {

// The design of mechanism `m` over `k` categories at `eps` (nats); aborts on an invalid one,
// which only a broken test passes.
inline CategoricalDesign Make(CategoricalMechanism m, int k, double eps) {
  return CategoricalDesign::Create(m, k, eps).value();
}

}  // namespace deniable::testing_util

#endif  // DENIABLE_COMMON_CATEGORICAL_TEST_UTIL_H_

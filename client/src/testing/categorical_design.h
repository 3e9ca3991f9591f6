// The wire design a collector sends for a metric with categories, for the SDK's fake
// collectors (fake_transport.h, fault_injecting_transport.h).
#ifndef DENIABLE_CLIENT_SRC_TESTING_CATEGORICAL_DESIGN_H_
#define DENIABLE_CLIENT_SRC_TESTING_CATEGORICAL_DESIGN_H_

#include "deniable/common/categorical.h"
#include "deniable/convert/categorical_convert.h"
#include "deniable/v1/design.pb.h"

namespace deniable::client::testing {

// Version 1 of the categorical design (mechanism, k, epsilon) as the collector states it
// (CategoricalDesignToProto: parameters.categorical, (a, b) = (p*, q*), epsilon, categories = k,
// hash_buckets = g).
// REQUIRES: CategoricalDesign::Create(mechanism, k, epsilon) is OK.
inline v1::Design CategoricalWireDesign(CategoricalMechanism mechanism, int k, double epsilon) {
  v1::Design design;
  CategoricalDesignToProto(*CategoricalDesign::Create(mechanism, k, epsilon), 1, &design);
  return design;
}

}  // namespace deniable::client::testing

#endif  // DENIABLE_CLIENT_SRC_TESTING_CATEGORICAL_DESIGN_H_

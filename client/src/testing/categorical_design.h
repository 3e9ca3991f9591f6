// The wire design a collector sends for a metric with categories, for the SDK's fake
// collectors (fake_transport.h, fault_injecting_transport.h).
#ifndef DENIABLE_CLIENT_SRC_TESTING_CATEGORICAL_DESIGN_H_
#define DENIABLE_CLIENT_SRC_TESTING_CATEGORICAL_DESIGN_H_

#include <cstdint>

#include "deniable/common/categorical.h"
#include "deniable/v1/design.pb.h"

namespace deniable::client::testing {

// Version 1 of the categorical design (mechanism, k, epsilon) as the collector states it:
// parameters.categorical, (a, b) = (p*, q*), epsilon, categories = k and hash_buckets = g.
// REQUIRES: CategoricalDesign::Create(mechanism, k, epsilon) is OK.
inline v1::Design CategoricalWireDesign(CategoricalMechanism mechanism, int k, double epsilon) {
  const CategoricalDesign d = *CategoricalDesign::Create(mechanism, k, epsilon);
  v1::Design design;
  v1::Categorical* c = design.mutable_parameters()->mutable_categorical();
  c->set_mechanism(mechanism == CategoricalMechanism::kDirectEncoding           ? v1::K_RR
                   : mechanism == CategoricalMechanism::kOptimizedUnaryEncoding ? v1::OUE
                                                                                : v1::OLH);
  c->set_epsilon(epsilon);
  design.set_version(1);
  design.set_a(d.p_star());
  design.set_b(d.q_star());
  design.set_epsilon(d.epsilon());
  design.set_categories(static_cast<uint32_t>(k));
  design.set_hash_buckets(static_cast<uint32_t>(d.hash_buckets()));
  return design;
}

}  // namespace deniable::client::testing

#endif  // DENIABLE_CLIENT_SRC_TESTING_CATEGORICAL_DESIGN_H_

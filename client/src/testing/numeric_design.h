// The wire design a collector sends for a numeric metric, for the SDK's fake collectors
// (fake_transport.h, fault_injecting_transport.h).
#ifndef DENIABLE_CLIENT_SRC_TESTING_NUMERIC_DESIGN_H_
#define DENIABLE_CLIENT_SRC_TESTING_NUMERIC_DESIGN_H_

#include <cstdint>
#include <vector>

#include "deniable/common/numeric.h"
#include "deniable/convert/numeric_convert.h"
#include "deniable/v1/design.pb.h"

namespace deniable::client::testing {

// Version 1 of the numeric design (mechanism, epsilon, edges, d) as the collector states it
// (NumericDesignToProto: parameters.numeric, a and b of the channel, epsilon; unit "ms").
// REQUIRES: NumericDesign::Create(mechanism, epsilon, edges, d) is OK.
inline v1::Design NumericWireDesign(v1::NumericMechanism mechanism, double epsilon,
                                    const std::vector<double>& edges, uint32_t sampled_buckets) {
  v1::Design design;
  NumericDesignToProto(
      *NumericDesign::Create(
          mechanism == v1::D_BIT_FLIP ? NumericMechanism::kDBitFlip : NumericMechanism::kOneBitMean,
          epsilon, edges, static_cast<int>(sampled_buckets)),
      1, "ms", &design);
  return design;
}

}  // namespace deniable::client::testing

#endif  // DENIABLE_CLIENT_SRC_TESTING_NUMERIC_DESIGN_H_

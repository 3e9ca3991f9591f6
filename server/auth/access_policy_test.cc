#include "server/auth/access_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "deniable/common/clock.h"

namespace deniable::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(AllowedRolesTest, TableOfBothFrontEnds) {
  EXPECT_THAT(AllowedRoles("deniable.v1.ReportService/GetDesign"),
              ElementsAre(Role::kReporter, Role::kAnalyst));
  EXPECT_THAT(AllowedRoles("deniable.v1.ReportService/SubmitReports"),
              ElementsAre(Role::kReporter));
  EXPECT_THAT(AllowedRoles("deniable.v1.ReportService/StreamReports"),
              ElementsAre(Role::kReporter));
  EXPECT_THAT(AllowedRoles("deniable.v1.QueryService/GetPrevalence"), ElementsAre(Role::kAnalyst));
  EXPECT_THAT(AllowedRoles("deniable.v1.AdminService/GetServerStats"), ElementsAre(Role::kAnalyst));
  EXPECT_THAT(AllowedRoles("deniable.v1.QueryService/"), IsEmpty());
  EXPECT_THAT(AllowedRoles("deniable.v1.ReportService/Other"), IsEmpty());
  EXPECT_THAT(AllowedRoles("QueryService/GetPrevalence"), IsEmpty());
}

TEST(AccessPolicyTest, UnknownMethodIsRefusedEvenWithoutTokens) {
  AccessPolicy policy(nullptr, nullptr);
  EXPECT_TRUE(
      policy.Authorize("deniable.v1.QueryService/GetPrevalence", "", "ipv4:1.2.3.4:5").ok());
  absl::StatusOr<Caller> refused = policy.Authorize("deniable.v1.Nope/X", "", "ipv4:1.2.3.4:5");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.status().message(), HasSubstr("deniable.v1.Nope/X"));
}

TEST(AccessPolicyTest, RolesAndTokensAndSharedRateLimit) {
  FakeClock clock(absl::FromUnixSeconds(1700000000));
  std::vector<TokenRecord> records(2);
  records[0].id = 1;
  records[0].role = Role::kAnalyst;
  records[0].hash = HashToken("dn_analyst");
  records[1].id = 2;
  records[1].role = Role::kReporter;
  records[1].hash = HashToken("dn_reporter");
  auto authenticator =
      Authenticator::Create([records] { return records; }, &clock, absl::Seconds(5));
  ASSERT_TRUE(authenticator.ok());
  RateLimitOptions limit;
  limit.reports_per_second = 1;
  limit.burst = 10;
  RateLimiter limiter(limit, &clock);
  AccessPolicy policy(authenticator->get(), &limiter);

  EXPECT_EQ(policy.Authorize("deniable.v1.QueryService/ListMetrics", "", "ipv4:1.2.3.4:5")
                .status()
                .code(),
            absl::StatusCode::kUnauthenticated);
  absl::StatusOr<Caller> wrong_role = policy.Authorize("deniable.v1.QueryService/ListMetrics",
                                                       "Bearer dn_reporter", "ipv4:1.2.3.4:5");
  EXPECT_EQ(wrong_role.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(wrong_role.status().message(), HasSubstr("ListMetrics needs role analyst"));

  // Two callers with the same token (one per transport) share one bucket; the peer is ignored.
  absl::StatusOr<Caller> grpc_caller = policy.Authorize("deniable.v1.ReportService/SubmitReports",
                                                        "Bearer dn_reporter", "ipv4:1.2.3.4:5");
  absl::StatusOr<Caller> http_caller = policy.Authorize("deniable.v1.ReportService/SubmitReports",
                                                        "Bearer dn_reporter", "ipv6:[::1]:9");
  ASSERT_TRUE(grpc_caller.ok() && http_caller.ok());
  EXPECT_EQ(grpc_caller->principal->token_id, 2);
  EXPECT_EQ(grpc_caller->rate_key, http_caller->rate_key);
  EXPECT_TRUE(policy.AdmitReports(*grpc_caller, 8).ok());
  EXPECT_EQ(policy.AdmitReports(*http_caller, 8).code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace deniable::server

#include "server/auth/access_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "deniable/common/clock.h"

namespace deniable::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Two tokens: id 1 "dn_analyst" (analyst) and id 2 "dn_reporter" (reporter).
std::vector<TokenRecord> AnalystAndReporterTokens() {
  std::vector<TokenRecord> records(2);
  records[0].id = 1;
  records[0].role = Role::kAnalyst;
  records[0].hash = HashToken("dn_analyst");
  records[1].id = 2;
  records[1].role = Role::kReporter;
  records[1].hash = HashToken("dn_reporter");
  return records;
}

TEST(AllowedRolesTest, TableOfBothFrontEnds) {
  EXPECT_THAT(AllowedRoles("deniable.v1.ReportService/GetDesign"),
              ElementsAre(Role::kReporter, Role::kAnalyst));
  EXPECT_THAT(AllowedRoles("deniable.v1.ReportService/SubmitReports"),
              ElementsAre(Role::kReporter));
  EXPECT_THAT(AllowedRoles("deniable.v1.ReportService/StreamReports"),
              ElementsAre(Role::kReporter));
  EXPECT_THAT(AllowedRoles("deniable.v1.QueryService/GetPrevalence"), ElementsAre(Role::kAnalyst));
  EXPECT_THAT(AllowedRoles("deniable.v1.QueryService/SetRetention"), ElementsAre(Role::kAnalyst));
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
  const std::vector<TokenRecord> records = AnalystAndReporterTokens();
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

TEST(AccessPolicyTest, TokenAddedToAnEmptyTableTurnsTokensOnLiveAndRevokingKeepsThemOn) {
  FakeClock clock(absl::FromUnixSeconds(1700000000));
  auto records = std::make_shared<std::vector<TokenRecord>>();
  auto authenticator =
      Authenticator::Create([records] { return *records; }, &clock, absl::Seconds(5));
  ASSERT_TRUE(authenticator.ok());
  AccessPolicy policy(authenticator->get(), nullptr);
  constexpr absl::string_view kList = "deniable.v1.QueryService/ListMetrics";

  // No token in the table: the tokenless development mode.
  EXPECT_FALSE((*authenticator)->TokensRequired());
  absl::StatusOr<Caller> open = policy.Authorize(kList, "", "ipv4:127.0.0.1:5");
  ASSERT_TRUE(open.ok()) << open.status();
  EXPECT_FALSE(open->principal.has_value());

  TokenRecord analyst;
  analyst.id = 1;
  analyst.role = Role::kAnalyst;
  analyst.hash = HashToken("dn_analyst");
  records->push_back(analyst);
  // Within the reload interval the old mode holds; after it, the added token is required.
  clock.Advance(absl::Seconds(4));
  EXPECT_TRUE(policy.Authorize(kList, "", "ipv4:127.0.0.1:5").ok());
  clock.Advance(absl::Seconds(2));
  EXPECT_EQ(policy.Authorize(kList, "", "ipv4:127.0.0.1:5").status().code(),
            absl::StatusCode::kUnauthenticated);
  absl::StatusOr<Caller> with_token = policy.Authorize(kList, "Bearer dn_analyst", "");
  ASSERT_TRUE(with_token.ok()) << with_token.status();
  EXPECT_EQ(with_token->principal->token_id, 1);

  // Revoking the only token does not reopen the server.
  (*records)[0].revoked_time_seconds = 1700000006;
  clock.Advance(absl::Seconds(6));
  EXPECT_TRUE((*authenticator)->TokensRequired());
  EXPECT_EQ(policy.Authorize(kList, "Bearer dn_analyst", "").status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(policy.Authorize(kList, "", "").status().code(), absl::StatusCode::kUnauthenticated);
}

// The import header turns a report call into an analyst-only call: a reporter token (what every
// device holds) is refused naming the header, an analyst token passes as an import, and the
// header changes nothing elsewhere.
TEST(AccessPolicyImportTest, OnlyAnAnalystTokenMayImport) {
  FakeClock clock(absl::FromUnixSeconds(1700000000));
  const std::vector<TokenRecord> records = AnalystAndReporterTokens();
  auto authenticator =
      Authenticator::Create([records] { return records; }, &clock, absl::Seconds(5));
  ASSERT_TRUE(authenticator.ok());
  AccessPolicy policy(authenticator->get(), nullptr);
  constexpr absl::string_view kSubmit = "deniable.v1.ReportService/SubmitReports";
  constexpr absl::string_view kStream = "deniable.v1.ReportService/StreamReports";

  for (absl::string_view method : {kSubmit, kStream}) {
    SCOPED_TRACE(method);
    absl::StatusOr<Caller> device =
        policy.Authorize(method, "Bearer dn_reporter", "", "historical");
    EXPECT_EQ(device.status().code(), absl::StatusCode::kPermissionDenied);
    EXPECT_THAT(device.status().message(), HasSubstr("x-deniable-import:"));
    EXPECT_THAT(device.status().message(), HasSubstr("role reporter"));

    absl::StatusOr<Caller> analyst =
        policy.Authorize(method, "Bearer dn_analyst", "", "historical");
    ASSERT_TRUE(analyst.ok()) << analyst.status();
    EXPECT_TRUE(analyst->import);
    EXPECT_EQ(analyst->principal->token_id, 1);

    EXPECT_EQ(policy.Authorize(method, "", "", "historical").status().code(),
              absl::StatusCode::kUnauthenticated);
    absl::StatusOr<Caller> bad_value = policy.Authorize(method, "Bearer dn_analyst", "", "yes");
    EXPECT_EQ(bad_value.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(bad_value.status().message(), HasSubstr("x-deniable-import: must be"));
    EXPECT_THAT(bad_value.status().message(), Not(HasSubstr("yes")));

    // Without the header nothing changes: devices report, analysts do not.
    absl::StatusOr<Caller> plain = policy.Authorize(method, "Bearer dn_reporter", "");
    ASSERT_TRUE(plain.ok()) << plain.status();
    EXPECT_FALSE(plain->import);
    EXPECT_EQ(policy.Authorize(method, "Bearer dn_analyst", "").status().code(),
              absl::StatusCode::kPermissionDenied);
  }
  // On other methods the header means nothing.
  absl::StatusOr<Caller> list = policy.Authorize("deniable.v1.QueryService/ListMetrics",
                                                 "Bearer dn_analyst", "", "historical");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_FALSE(list->import);
  EXPECT_TRUE(
      policy
          .Authorize("deniable.v1.ReportService/GetDesign", "Bearer dn_reporter", "", "historical")
          .ok());
}

TEST(AccessPolicyImportTest, TokenlessModeRefusesImportsButNotReports) {
  AccessPolicy policy(nullptr, nullptr);
  constexpr absl::string_view kSubmit = "deniable.v1.ReportService/SubmitReports";
  absl::StatusOr<Caller> import = policy.Authorize(kSubmit, "", "ipv4:1.2.3.4:5", "historical");
  EXPECT_EQ(import.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(import.status().message(), HasSubstr("x-deniable-import:"));
  EXPECT_THAT(import.status().message(), HasSubstr("without tokens"));
  EXPECT_TRUE(policy.Authorize(kSubmit, "", "ipv4:1.2.3.4:5").ok());
}

}  // namespace
}  // namespace deniable::server

#include "server/http/request_checks.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable::server::http {
namespace {
namespace request_checks_test {

using ::testing::HasSubstr;

TEST(IsGuardedRouteTest, GuardsEverythingUnderV1ButReportService) {
  EXPECT_TRUE(IsGuardedRoute("/v1/QueryService/DeleteMetric"));
  EXPECT_TRUE(IsGuardedRoute("/v1/AdminService/GetServerStats"));
  EXPECT_TRUE(IsGuardedRoute("/v1/NoSuchService/X"));
  EXPECT_FALSE(IsGuardedRoute("/v1/ReportService/SubmitReports"));
  EXPECT_FALSE(IsGuardedRoute("/livez"));
}

TEST(CheckJsonContentTypeTest, AcceptsJsonWithParametersInAnyCase) {
  EXPECT_TRUE(CheckJsonContentType({.content_type = "application/json"}).ok());
  EXPECT_TRUE(CheckJsonContentType({.content_type = "Application/JSON; charset=utf-8"}).ok());
}

TEST(CheckJsonContentTypeTest, RefusesSimpleRequestTypesAndNone) {
  for (const char* type : {"text/plain", "application/x-www-form-urlencoded",
                           "multipart/form-data; boundary=x", "application/jsonx"}) {
    const absl::Status s = CheckJsonContentType({.content_type = type});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << type;
    EXPECT_THAT(s.message(), HasSubstr("content-type:")) << type;
  }
  EXPECT_THAT(CheckJsonContentType({}).message(), HasSubstr("but the request has none"));
}

TEST(CheckJsonContentTypeTest, CapsTheEchoedValue) {
  const std::string huge(1 << 20, 'x');
  const absl::Status s = CheckJsonContentType({.content_type = huge});
  EXPECT_LT(s.message().size(), 512u);
  EXPECT_THAT(s.message(), HasSubstr("(1048576 bytes)"));
}

TEST(CheckSameOriginTest, AcceptsNoOriginAndTheRequestsOwn) {
  EXPECT_TRUE(CheckSameOrigin({.host = "127.0.0.1:8080"}).ok());
  EXPECT_TRUE(CheckSameOrigin({.origin = "http://127.0.0.1:8080", .host = "127.0.0.1:8080"}).ok());
  EXPECT_TRUE(
      CheckSameOrigin({.origin = "https://C.example", .host = "c.example", .tls = true}).ok());
}

TEST(CheckSameOriginTest, RefusesAnotherOriginSchemeOrNull) {
  for (const char* origin :
       {"http://evil.example", "https://127.0.0.1:8080", "http://127.0.0.1:8081", "null", ""}) {
    const absl::Status s = CheckSameOrigin({.origin = origin, .host = "127.0.0.1:8080"});
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << origin;
    EXPECT_THAT(s.message(), HasSubstr("origin:")) << origin;
  }
  EXPECT_FALSE(CheckSameOrigin({.origin = "http://x"}).ok());  // no Host at all
}

TEST(CheckSameOriginTest, FollowsTheProxysForwardedHostAndScheme) {
  const RequestHeaders behind_proxy{.origin = "https://collector.example",
                                    .host = "127.0.0.1:8080",
                                    .forwarded_host = "collector.example",
                                    .forwarded_proto = "https"};
  EXPECT_TRUE(CheckSameOrigin(behind_proxy).ok());
  RequestHeaders other = behind_proxy;
  other.origin = "https://evil.example";
  EXPECT_FALSE(CheckSameOrigin(other).ok());
}

TEST(CheckContentLengthTest, RefusesMoreThanTheLimitWhateverItsSize) {
  EXPECT_TRUE(CheckContentLength(std::nullopt, 100).ok());
  EXPECT_TRUE(CheckContentLength("100", 100).ok());
  for (const char* length : {"101", "99999999999", "999999999999999999999999999999"}) {
    const absl::Status s = CheckContentLength(length, 100);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << length;
    EXPECT_THAT(s.message(), HasSubstr("body: larger than the server accepts (100 bytes"));
  }
  EXPECT_THAT(CheckContentLength("-1", 100).message(), HasSubstr("content-length:"));
}

}  // namespace request_checks_test
}  // namespace
}  // namespace deniable::server::http

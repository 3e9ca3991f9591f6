#include "server/log_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "deniable/common/echo.h"

namespace deniable::server {
namespace {
namespace log_fields_test {

using ::testing::ElementsAre;
using ::testing::Pair;

std::string Json(absl::string_view message) {
  std::string out;
  AppendJsonLogMembers(message, &out);
  return "{" + out + "}";
}

TEST(ParseLogFieldsTest, SplitsPairsFromFreeText) {
  const LogFields f = ParseLogFields(
      "event=start listen=127.0.0.1:0 port=50051 db=postgresql://h/db?x=1 tls=off INSECURE");
  EXPECT_EQ(f.text, "INSECURE");
  EXPECT_THAT(f.fields, ElementsAre(Pair("event", "start"), Pair("listen", "127.0.0.1:0"),
                                    Pair("port", "50051"), Pair("db", "postgresql://h/db?x=1"),
                                    Pair("tls", "off")));
}

TEST(ParseLogFieldsTest, KeepsQuotedValuesWholeWithTheQuotesInside) {
  const LogFields f = ParseLogFields(
      "event=batch_rejected reports=3 code=NOT_FOUND reason=\"reports[0].metric: unknown metric "
      "\"x y\"; known \"a\"\" tail words");
  EXPECT_EQ(f.text, "tail words");
  EXPECT_THAT(
      f.fields,
      ElementsAre(Pair("event", "batch_rejected"), Pair("reports", "3"), Pair("code", "NOT_FOUND"),
                  Pair("reason", "reports[0].metric: unknown metric \"x y\"; known \"a\"")));
  const LogFields next = ParseLogFields("event=a reason=\"one \"two\" three\" code=OK");
  EXPECT_THAT(next.fields, ElementsAre(Pair("event", "a"), Pair("reason", "one \"two\" three"),
                                       Pair("code", "OK")));
}

TEST(ParseLogFieldsTest, AnEchoedClientValueCannotAddAField) {
  // EchoValue escapes the client's quotes, so its " code=OK" stays inside the reason.
  const std::string reason =
      "metric: unknown metric " + EchoValue("x\" code=OK level=error msg=\"hi");
  const LogFields f =
      ParseLogFields("event=batch_rejected code=NOT_FOUND reason=\"" + reason + "\"");
  EXPECT_THAT(f.fields, ElementsAre(Pair("event", "batch_rejected"), Pair("code", "NOT_FOUND"),
                                    Pair("reason", reason)));
  EXPECT_EQ(f.text, "");
}

TEST(ParseLogFieldsTest, ReservedAndRepeatedKeysStayInTheText) {
  const LogFields f = ParseLogFields("event=x level=9 code=1 code=2 msg=hi");
  EXPECT_THAT(f.fields, ElementsAre(Pair("event", "x"), Pair("code", "1")));
  EXPECT_EQ(f.text, "level=9 code=2 msg=hi");
}

TEST(ParseLogFieldsTest, PlainSentencesAreAllText) {
  const LogFields f =
      ParseLogFields("--durability must be full or normal, but is \"x=1\" (see --help)");
  EXPECT_TRUE(f.fields.empty());
  EXPECT_EQ(f.text, "--durability must be full or normal, but is \"x=1\" (see --help)");
}

TEST(AppendJsonLogMembersTest, WritesNumbersAsNumbersAndTheEventAsMsgWithoutText) {
  EXPECT_EQ(Json("event=access transport=grpc code=OK latency_ms=0.412 reports=40 id=007"),
            R"({"msg":"access","event":"access","transport":"grpc","code":"OK",)"
            R"("latency_ms":0.412,"reports":40,"id":"007"})");
  EXPECT_EQ(Json("event=imports_enabled max_import_age_seconds=3600 (analyst tokens only)"),
            R"j({"msg":"(analyst tokens only)","event":"imports_enabled",)j"
            R"j("max_import_age_seconds":3600})j");
  EXPECT_EQ(Json("grpc: a.cc:12 epoll fd: 13"), R"({"msg":"grpc: a.cc:12 epoll fd: 13"})");
}

TEST(AppendJsonLogMembersTest, EscapesQuotesBackslashesAndControlBytes) {
  EXPECT_EQ(Json("event=x reason=\"a\\\\b \"q\"\n\x01\""),
            R"({"msg":"x","event":"x","reason":"a\\\\b \"q\"\n\u0001"})");
}

}  // namespace log_fields_test
}  // namespace
}  // namespace deniable::server

// ExplainUnreachable on the messages gRPC gives for a new developer's usual mistakes (the texts
// below are gRPC 1.51's, recorded against a real deniable-server; the process test
// tests/interop/c_dev_errors_test.py checks them end to end through the C API).
#include "client/src/unreachable.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable::client {
namespace {
namespace unreachable_test {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kRefused[] =
    "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:1: Failed to "
    "connect to remote host: Connection refused";
constexpr char kTlsToPlaintext[] =
    "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:50071: Ssl "
    "handshake failed: SSL_ERROR_SSL: error:0A00010B:SSL routines::wrong version number";
constexpr char kPlaintextToTls[] =
    "failed to connect to all addresses; last error: UNAVAILABLE: ipv4:127.0.0.1:50081: Socket "
    "closed";
constexpr char kHttpPort[] =
    "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:50072: Trying to "
    "connect an http1.x server";

TEST(ExplainUnreachableTest, NothingListeningSaysToStartTheServer) {
  auto e = ExplainUnreachable("127.0.0.1:1", TransportSecurity::kPlaintext, kRefused);
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr("cannot reach 127.0.0.1:1: nothing answered there"));
  EXPECT_THAT(*e, HasSubstr("is deniable-server running"));
  EXPECT_THAT(*e, HasSubstr(kRefused));  // gRPC's own words are kept
}

TEST(ExplainUnreachableTest, TlsAgainstPlaintextSaysToUseThePlaintextTransport) {
  auto e = ExplainUnreachable("127.0.0.1:50071", TransportSecurity::kTls, kTlsToPlaintext);
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr("over TLS: the server there speaks plaintext"));
  EXPECT_THAT(*e, HasSubstr("MakeInsecureGrpcTransport"));
  EXPECT_THAT(*e, HasSubstr("insecure = 1"));
}

TEST(ExplainUnreachableTest, PlaintextAgainstTlsSaysTheServerExpectsTls) {
  auto e = ExplainUnreachable("127.0.0.1:50081", TransportSecurity::kPlaintext, kPlaintextToTls);
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr("in plaintext: the server closed the connection (does it expect TLS?"));
  // Over TLS the same words are not read as "plaintext against TLS" nor as "nothing there".
  auto tls = ExplainUnreachable("127.0.0.1:50081", TransportSecurity::kTls, kPlaintextToTls);
  EXPECT_FALSE(tls.has_value());
}

TEST(ExplainUnreachableTest, TheHttpListenersPortIsNamedAsSuch) {
  auto e = ExplainUnreachable("127.0.0.1:50072", TransportSecurity::kPlaintext, kHttpPort);
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr("HTTP listener (--http_listen"));
  EXPECT_THAT(*e, HasSubstr("gRPC --listen address"));
  EXPECT_THAT(*e, Not(HasSubstr("nothing answered")));
}

TEST(ExplainUnreachableTest, OtherMessagesAreLeftAlone) {
  EXPECT_FALSE(ExplainUnreachable("x:1", TransportSecurity::kTls, "server shutting down"));
  // A caller's own channel: no target known.
  auto e = ExplainUnreachable("", TransportSecurity::kUnknown, kRefused);
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr("cannot reach the collector"));
}

}  // namespace unreachable_test
}  // namespace
}  // namespace deniable::client

// The SDK over TLS: a collector on 127.0.0.1 with a certificate signed by a CA the test makes
// (openssl CLI, into a temporary directory), a client that trusts only that CA, and a bearer
// token checked by the server.
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/auth_metadata_processor.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "deniable/client/grpc_transport.h"
#include "deniable/client/reporter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/collector_server.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable {
namespace {

constexpr char kToken[] = "test-token-5a1f";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Accepts calls whose "authorization" metadata is "Bearer <kToken>".
class TokenChecker : public grpc::AuthMetadataProcessor {
 public:
  bool IsBlocking() const override { return false; }
  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                       OutputMetadata* consumed, OutputMetadata* response) override {
    auto it = auth_metadata.find("authorization");
    if (it == auth_metadata.end() ||
        std::string(it->second.data(), it->second.size()) != absl::StrCat("Bearer ", kToken)) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "missing or wrong bearer token");
    }
    return grpc::Status::OK;
  }
};

class SdkTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(absl::StrCat(::testing::TempDir(), "/tls_", getpid()));
    const std::string d = *dir_;
    const std::string script = absl::StrCat(
        "set -e; mkdir -p ", d, "; cd ", d,
        "; openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=deniable-test-ca"
        " -keyout ca.key -out ca.pem 2>/dev/null"
        "; openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout server.key"
        " -out server.csr 2>/dev/null"
        "; printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > ext.cnf"
        "; openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1"
        " -extfile ext.cnf -out server.pem 2>/dev/null"
        "; openssl req -newkey rsa:2048 -nodes -subj /CN=device -keyout client.key"
        " -out client.csr 2>/dev/null"
        "; openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1"
        " -out client.pem 2>/dev/null"
        "; openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other-ca"
        " -keyout other.key -out other.pem 2>/dev/null");
    ASSERT_EQ(std::system(script.c_str()), 0) << "openssl failed";
  }
  static void TearDownTestSuite() {
    std::system(absl::StrCat("rm -rf ", *dir_).c_str());
    delete dir_;
  }

  void SetUp() override {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back(
        {ReadFile(*dir_ + "/server.key"), ReadFile(*dir_ + "/server.pem")});
    std::shared_ptr<grpc::ServerCredentials> credentials = grpc::SslServerCredentials(ssl);
    credentials->SetAuthMetadataProcessor(std::make_shared<TokenChecker>());
    StartServer(credentials);
  }

  void StartServer(std::shared_ptr<grpc::ServerCredentials> credentials) {
    server_.reset();
    server::ServerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.credentials = std::move(credentials);
    auto storage = std::make_unique<server::MemoryStorage>();
    storage_ = storage.get();
    auto server = server::CollectorServer::Start(std::move(storage), &clock_, options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);

    auto queries = v1::QueryService::NewStub(server_->InProcessChannel());
    v1::CreateMetricRequest create;
    create.set_name("m");
    create.mutable_design()->mutable_two_coin();
    grpc::ClientContext context;
    v1::Metric metric;
    ASSERT_TRUE(queries->CreateMetric(&context, create, &metric).ok());
  }

  client::GrpcTransportOptions Options() {
    client::GrpcTransportOptions o;
    o.target = absl::StrCat("127.0.0.1:", server_->port());
    o.ca_file = *dir_ + "/ca.pem";
    o.bearer_token = kToken;
    return o;
  }

  absl::Status ReportOnce(const client::GrpcTransportOptions& o) {
    auto transport = client::MakeSecureGrpcTransport(o);
    if (!transport.ok()) return transport.status();
    client::ReporterOptions options;
    options.background_sending = false;
    options.max_attempts = 1;
    auto reporter = client::Reporter::CreateForTesting(*transport, options, gen_, &clock_);
    if (absl::Status s = reporter->Report("m", true); !s.ok()) return s;
    return reporter->Flush(absl::Seconds(10));
  }

  static std::string* dir_;
  FakeClock clock_{absl::FromUnixSeconds(1'700'000'000)};
  std::mt19937_64 gen_{3};
  server::MemoryStorage* storage_ = nullptr;
  std::unique_ptr<server::CollectorServer> server_;
};
std::string* SdkTlsTest::dir_ = nullptr;

TEST_F(SdkTlsTest, ReportsTravelOverTlsWithTheBearerToken) {
  ASSERT_TRUE(ReportOnce(Options()).ok());
  EXPECT_EQ(storage_->ReportCount(), 1);
}

TEST_F(SdkTlsTest, WrongTokenIsRefusedAndNothingIsStored) {
  client::GrpcTransportOptions o = Options();
  o.bearer_token = "wrong";
  EXPECT_EQ(ReportOnce(o).code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(storage_->ReportCount(), 0);
}

TEST_F(SdkTlsTest, ServerSignedByAnotherCaIsNotTrusted) {
  client::GrpcTransportOptions o = Options();
  o.ca_file = *dir_ + "/other.pem";
  EXPECT_EQ(ReportOnce(o).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(storage_->ReportCount(), 0);
}

TEST_F(SdkTlsTest, MissingCaFileIsNamed) {
  client::GrpcTransportOptions o = Options();
  o.ca_file = *dir_ + "/absent.pem";
  absl::Status s = client::MakeSecureGrpcTransport(o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("ca_file"));
}

TEST_F(SdkTlsTest, ClientKeyWithoutCertificateIsRejected) {
  client::GrpcTransportOptions o = Options();
  o.client_key_file = *dir_ + "/ca.key";
  EXPECT_EQ(client::MakeSecureGrpcTransport(o).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SdkTlsTest, MutualTlsAcceptsOnlyAClientWithACertificateFromTheCa) {
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = ReadFile(*dir_ + "/ca.pem");
  ssl.pem_key_cert_pairs.push_back(
      {ReadFile(*dir_ + "/server.key"), ReadFile(*dir_ + "/server.pem")});
  StartServer(grpc::SslServerCredentials(ssl));
  client::GrpcTransportOptions o = Options();
  EXPECT_FALSE(ReportOnce(o).ok());  // no client certificate
  EXPECT_EQ(storage_->ReportCount(), 0);
  o.client_cert_file = *dir_ + "/client.pem";
  o.client_key_file = *dir_ + "/client.key";
  ASSERT_TRUE(ReportOnce(o).ok());
  EXPECT_EQ(storage_->ReportCount(), 1);
}

}  // namespace
}  // namespace deniable

#include "tools/cli/import_transport.h"

#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable::tools {
namespace {
namespace import_transport_test {

using ::testing::HasSubstr;

const std::string kDigest(32, '\x42');

TEST(ImportReportIdTest, SameImportGivesSameIdsSoARerunIsDeduplicated) {
  EXPECT_EQ(ImportReportId("dn_analyst", "vote", kDigest, 7, 1600000000),
            ImportReportId("dn_analyst", "vote", kDigest, 7, 1600000000));
}

TEST(ImportReportIdTest, EveryInputChangesTheId) {
  const auto base = ImportReportId("dn_analyst", "vote", kDigest, 7, 1600000000);
  EXPECT_NE(base, ImportReportId("dn_other", "vote", kDigest, 7, 1600000000));
  EXPECT_NE(base, ImportReportId("dn_analyst", "vote2", kDigest, 7, 1600000000));
  EXPECT_NE(base, ImportReportId("dn_analyst", "vote", std::string(32, '\x43'), 7, 1600000000));
  EXPECT_NE(base, ImportReportId("dn_analyst", "vote", kDigest, 8, 1600000000));
  EXPECT_NE(base, ImportReportId("dn_analyst", "vote", kDigest, 7, 1600003600));
  // The fields are separated: moving a digit from the record to the time is another id.
  EXPECT_NE(ImportReportId("k", "m", kDigest, 12, 3), ImportReportId("k", "m", kDigest, 1, 23));
}

TEST(ImportReportIdTest, IsTheTruncatedHmacSha256OfTheDocumentedMessage) {
  // HMAC-SHA256(key "key", "deniable-import-v1\0m\0\0" + "1\0" + "2"), computed independently
  // with Python: hmac.new(b"key", b"deniable-import-v1\0m\0\0" b"1\0" b"2", "sha256").
  const auto id = ImportReportId("key", "m", "", 1, 2);
  std::string hex;
  for (uint8_t b : id) {
    char buf[3];
    std::snprintf(buf, sizeof buf, "%02x", b);
    hex += buf;
  }
  EXPECT_EQ(hex, "327f53f906aec9e7d5510c4ab8770c7b");
}

TEST(AssignImportIdsTest, ReplacesEachReportsIdByItsOwnMetricAndTime) {
  v1::SubmitReportsRequest request;
  v1::Report* a = request.add_reports();
  a->set_metric("vote");
  a->set_event_time_seconds(1600000000);
  a->set_report_id(std::string(16, 'r'));
  AssignImportIds("dn_analyst", kDigest, 7, &request);
  const auto want = ImportReportId("dn_analyst", "vote", kDigest, 7, 1600000000);
  EXPECT_EQ(request.reports(0).report_id(),
            std::string(reinterpret_cast<const char*>(want.data()), want.size()));
}

TEST(FileSha256Test, DigestOfAFileAndAClearErrorForAMissingOne) {
  const std::string path = ::testing::TempDir() + "/import_digest.csv";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("abc", f);
  std::fclose(f);
  absl::StatusOr<std::string> digest = FileSha256(path, "csv");
  ASSERT_TRUE(digest.ok()) << digest.status();
  ASSERT_EQ(digest->size(), 32u);
  // SHA-256("abc") (FIPS 180-2, appendix B.1) begins ba7816bf.
  EXPECT_EQ(static_cast<uint8_t>((*digest)[0]), 0xba);
  EXPECT_EQ(static_cast<uint8_t>((*digest)[1]), 0x78);
  EXPECT_EQ(static_cast<uint8_t>((*digest)[2]), 0x16);
  EXPECT_EQ(static_cast<uint8_t>((*digest)[3]), 0xbf);
  absl::StatusOr<std::string> missing = FileSha256(path + ".absent", "csv");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("--csv"));
}

}  // namespace import_transport_test
}  // namespace
}  // namespace deniable::tools

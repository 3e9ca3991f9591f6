// A test fixture for Reporter tests over the fake collector: a fake clock, a seeded generator,
// foreground sending, and a per-test SQLite device file (removed with its WAL files at the end).
#ifndef DENIABLE_CLIENT_SRC_TESTING_REPORTER_FILE_FIXTURE_H_
#define DENIABLE_CLIENT_SRC_TESTING_REPORTER_FILE_FIXTURE_H_

#include <unistd.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/src/testing/fake_transport.h"
#include "deniable/client/device_store.h"
#include "deniable/client/reporter.h"
#include "gtest/gtest.h"

namespace deniable::client::testing {

class ReporterFileFixture : public ::testing::Test {
 protected:
  // `now`: the fake clock's start; `seed`: the generator's; `file_prefix`: names the device file.
  ReporterFileFixture(absl::Time now, uint64_t seed, const char* file_prefix)
      : clock_(now), gen_(seed) {
    options_.background_sending = false;
    path_ = absl::StrCat(::testing::TempDir(), "/", file_prefix, "_", getpid(), "_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".db");
    unlink(path_.c_str());
  }
  ~ReporterFileFixture() override {
    for (const char* suffix : {"", "-wal", "-shm"}) unlink((path_ + suffix).c_str());
  }
  // A reporter over `transport_` with `options_` (an in-memory store when `store` is null).
  std::unique_ptr<Reporter> Make(std::unique_ptr<DeviceStore> store = nullptr) {
    return Reporter::CreateForTesting(transport_, options_, gen_, &clock_, std::move(store));
  }
  // The SQLite device store at `path_` (null, with a test failure, if it cannot be opened).
  std::unique_ptr<DeviceStore> OpenFile() {
    absl::StatusOr<std::unique_ptr<DeviceStore>> store = OpenSqliteDeviceStore({.path = path_});
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }
  // The bits the fake collector received, in the order sent.
  std::vector<uint32_t> SentBits() const {
    std::vector<uint32_t> bits;
    for (const auto& s : transport_->submits) {
      for (const auto& r : s.reports()) bits.push_back(r.bit());
    }
    return bits;
  }

  std::shared_ptr<FakeTransport> transport_ = std::make_shared<FakeTransport>();
  ReporterOptions options_;
  FakeClock clock_;
  std::mt19937_64 gen_;
  std::string path_;
};

}  // namespace deniable::client::testing

#endif  // DENIABLE_CLIENT_SRC_TESTING_REPORTER_FILE_FIXTURE_H_

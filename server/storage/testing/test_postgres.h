// A real PostgreSQL 15 server for tests, started in a temporary directory and torn down after.
//
//   TestPostgres* pg = TestPostgres::Shared();           // nullptr: not installed
//   if (pg == nullptr) GTEST_SKIP() << TestPostgres::kNotInstalled;
//   absl::StatusOr<std::string> uri = pg->NewDatabase();  // "postgresql://postgres@127.0.0.1:P/t3"
//
// Runs Debian's /usr/lib/postgresql/15/bin/initdb and pg_ctl (as the user "postgres" through
// runuser when the test runs as root, since PostgreSQL refuses to run as root), trust
// authentication, a free TCP port on 127.0.0.1 and the unix socket in the temporary directory.
// fsync is off (a test never survives power loss; a crash of the server loses nothing committed).
// A watchdog shell stops the server when the test process dies, so a crashed test leaves no
// server behind. Thread-safe.
#ifndef DENIABLE_SERVER_STORAGE_TESTING_TEST_POSTGRES_H_
#define DENIABLE_SERVER_STORAGE_TESTING_TEST_POSTGRES_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

// In a gtest SetUp or test body: skips the test when PostgreSQL is not installed, or fails it
// when TestPostgres::Required().
#define DENIABLE_SKIP_WITHOUT_POSTGRES()                                                    \
  do {                                                                                      \
    using ::deniable::server::testing_util::TestPostgres;                                   \
    if (!TestPostgres::Installed()) {                                                       \
      if (TestPostgres::Required()) FAIL() << TestPostgres::kNotInstalled << " (required)"; \
      GTEST_SKIP() << TestPostgres::kNotInstalled;                                          \
    }                                                                                       \
  } while (false)

namespace deniable::server::testing_util {

class TestPostgres {
 public:
  static constexpr char kBinDir[] = "/usr/lib/postgresql/15/bin";
  static constexpr char kNotInstalled[] =
      "PostgreSQL 15 is not installed (/usr/lib/postgresql/15/bin/initdb is missing; "
      "apt-get install postgresql-15): skipping the PostgreSQL tests";

  // Whether initdb exists.
  static bool Installed();
  // Whether a missing PostgreSQL must fail the test rather than skip it: the environment
  // variable DENIABLE_REQUIRE_COMPONENTS is set and not "0" (.ci/run sets it; CI installs
  // PostgreSQL, so its absence there is a broken install). Use DENIABLE_SKIP_WITHOUT_POSTGRES().
  static bool Required();
  // Initializes and starts a cluster. Errors: FAILED_PRECONDITION when not installed;
  // INTERNAL naming the command that failed, with its log.
  static absl::StatusOr<std::unique_ptr<TestPostgres>> Start();
  // The process's cluster, started on first use and stopped at exit; nullptr when PostgreSQL is
  // not installed. A failure to start fails the calling test (ADD_FAILURE) and returns nullptr.
  static TestPostgres* Shared();
  ~TestPostgres();

  // Creates a new empty database; returns its URI.
  absl::StatusOr<std::string> NewDatabase();
  // "postgresql://postgres@127.0.0.1:<port>/<db>".
  std::string Uri(const std::string& db) const;
  int port() const { return port_; }
  // pg_ctl stop -m fast (connections are cut), then start again on the same port.
  absl::Status Stop();
  absl::Status Restart();
  absl::Status StartAgain();

 private:
  TestPostgres() = default;
  absl::Status Run(const std::string& command) const;  // as the postgres user

  std::string dir_;
  int port_ = 0;
  absl::Mutex mu_;
  int next_db_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace deniable::server::testing_util

#endif  // DENIABLE_SERVER_STORAGE_TESTING_TEST_POSTGRES_H_

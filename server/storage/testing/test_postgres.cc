#include "server/storage/testing/test_postgres.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace deniable::server::testing_util {
namespace {

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

bool TestPostgres::Installed() {
  return access(absl::StrCat(kBinDir, "/initdb").c_str(), X_OK) == 0;
}

bool TestPostgres::Required() {
  const char* value = std::getenv("DENIABLE_REQUIRE_COMPONENTS");
  return value != nullptr && *value != '\0' && std::string(value) != "0";
}

absl::Status TestPostgres::Run(const std::string& command) const {
  const std::string as_user = geteuid() == 0 ? "runuser -u postgres -- " : "";
  const std::string full =
      absl::StrCat(as_user, command, " >>", dir_, "/commands.log 2>&1 </dev/null");
  if (std::system(full.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("test PostgreSQL: `", command, "` failed:\n",
                                            ReadAll(dir_ + "/commands.log"), "\n",
                                            ReadAll(dir_ + "/server.log")));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TestPostgres>> TestPostgres::Start() {
  if (!Installed()) return absl::FailedPreconditionError(kNotInstalled);
  auto pg = std::unique_ptr<TestPostgres>(new TestPostgres());
  std::string tmpl = "/tmp/deniable-pg-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) return absl::InternalError("mkdtemp failed");
  pg->dir_ = tmpl;
  if (geteuid() == 0 &&
      std::system(absl::StrCat("chown postgres:postgres ", pg->dir_).c_str()) != 0) {
    return absl::InternalError("cannot chown the test PostgreSQL directory to postgres");
  }
  if (absl::Status s = pg->Run(absl::StrCat(kBinDir, "/initdb -D ", pg->dir_,
                                            "/data -U postgres --auth=trust --locale=C.UTF-8 "
                                            "--encoding=UTF8 --no-sync"));
      !s.ok()) {
    return s;
  }
  pg->port_ = FreePort();
  if (absl::Status s = pg->StartAgain(); !s.ok()) return s;
  // The watchdog: stops the server and removes the directory once this process is gone.
  const std::string watchdog = absl::StrCat(
      "(while kill -0 ", getpid(), " 2>/dev/null; do sleep 1; done; ",
      geteuid() == 0 ? "runuser -u postgres -- " : "", kBinDir, "/pg_ctl -D ", pg->dir_,
      "/data stop -m immediate >/dev/null 2>&1; rm -rf ", pg->dir_, ") >/dev/null 2>&1 &");
  (void)std::system(watchdog.c_str());
  return pg;
}

absl::Status TestPostgres::StartAgain() {
  return Run(absl::StrCat(kBinDir, "/pg_ctl -D ", dir_, "/data -l ", dir_, "/server.log -w ",
                          "-o \"-p ", port_, " -k ", dir_, " -c listen_addresses=127.0.0.1 ",
                          "-c fsync=off -c full_page_writes=off -c max_connections=200\" start"));
}

absl::Status TestPostgres::Stop() {
  return Run(absl::StrCat(kBinDir, "/pg_ctl -D ", dir_, "/data -w -m fast stop"));
}

absl::Status TestPostgres::Restart() {
  if (absl::Status s = Stop(); !s.ok()) return s;
  return StartAgain();
}

TestPostgres::~TestPostgres() {
  if (dir_.empty()) return;
  (void)Run(absl::StrCat(kBinDir, "/pg_ctl -D ", dir_, "/data -w -m immediate stop"));
  (void)std::system(absl::StrCat("rm -rf ", dir_).c_str());
}

TestPostgres* TestPostgres::Shared() {
  static TestPostgres* shared = []() -> TestPostgres* {
    if (!Installed()) return nullptr;
    absl::StatusOr<std::unique_ptr<TestPostgres>> pg = Start();
    if (!pg.ok()) {
      ADD_FAILURE() << pg.status();
      return nullptr;
    }
    TestPostgres* raw = pg->release();
    std::atexit([] { delete Shared(); });
    return raw;
  }();
  return shared;
}

std::string TestPostgres::Uri(const std::string& db) const {
  return absl::StrCat("postgresql://postgres@127.0.0.1:", port_, "/", db);
}

absl::StatusOr<std::string> TestPostgres::NewDatabase() {
  int n = 0;
  {
    absl::MutexLock lock(&mu_);
    n = next_db_++;
  }
  const std::string db = absl::StrCat("t", n);
  if (absl::Status s =
          Run(absl::StrCat(kBinDir, "/createdb -h ", dir_, " -p ", port_, " -U postgres ", db));
      !s.ok()) {
    return s;
  }
  return Uri(db);
}

}  // namespace deniable::server::testing_util

#include "server/http/connection_deadlines.h"

#include <sys/socket.h>

#include <algorithm>
#include <utility>

namespace deniable::server::http {

struct ConnectionDeadlines::Connection {
  enum class Phase { kHeaders, kBody, kHandling };
  int fd = -1;
  Phase phase = Phase::kHeaders;
  absl::Time ready;  // when the connection became ready for its current request
  bool cut = false;
};

ConnectionDeadlines::ConnectionDeadlines(absl::Duration header_timeout,
                                         absl::Duration request_timeout,
                                         std::function<void()> on_cut)
    : header_timeout_(header_timeout),
      request_timeout_(request_timeout),
      on_cut_(std::move(on_cut)) {
  watchdog_ = std::thread([this] { Watch(); });
}

ConnectionDeadlines::~ConnectionDeadlines() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  watchdog_.join();
  absl::MutexLock lock(&mu_);
  for (Connection* c : open_) delete c;
}

ConnectionDeadlines::Connection* ConnectionDeadlines::Opened(int fd) {
  auto* c = new Connection{.fd = fd, .ready = absl::Now()};
  absl::MutexLock lock(&mu_);
  open_.insert(c);
  return c;
}

void ConnectionDeadlines::HeadersDone(Connection* c) {
  absl::MutexLock lock(&mu_);
  c->phase = Connection::Phase::kBody;
}

void ConnectionDeadlines::BodyDone(Connection* c) {
  absl::MutexLock lock(&mu_);
  c->phase = Connection::Phase::kHandling;
}

void ConnectionDeadlines::RequestDone(Connection* c) {
  absl::MutexLock lock(&mu_);
  c->phase = Connection::Phase::kHeaders;
  c->ready = absl::Now();
}

void ConnectionDeadlines::Closed(Connection* c) {
  absl::MutexLock lock(&mu_);
  open_.erase(c);
  delete c;
}

int64_t ConnectionDeadlines::cut() const {
  absl::MutexLock lock(&mu_);
  return cut_;
}

void ConnectionDeadlines::Watch() {
  // Deadlines are kept to within a tenth of the shorter timeout (at most 250 ms late).
  const absl::Duration tick = std::clamp(std::min(header_timeout_, request_timeout_) / 10,
                                         absl::Milliseconds(10), absl::Milliseconds(250));
  absl::MutexLock lock(&mu_);
  while (!mu_.AwaitWithTimeout(absl::Condition(&stop_), tick)) {
    const absl::Time now = absl::Now();
    for (Connection* c : open_) {
      if (c->cut || c->phase == Connection::Phase::kHandling) continue;
      const absl::Duration limit =
          c->phase == Connection::Phase::kHeaders ? header_timeout_ : request_timeout_;
      if (now - c->ready < limit) continue;
      // The socket stays open (its thread closes it): Closed() cannot race with this call.
      shutdown(c->fd, SHUT_RDWR);
      c->cut = true;
      ++cut_;
      if (on_cut_ != nullptr) on_cut_();
    }
  }
}

}  // namespace deniable::server::http

#include "server/http/connection_deadlines.h"

#include <sys/socket.h>

#include <algorithm>
#include <utility>

namespace deniable::server::http {

struct ConnectionDeadlines::Connection {
  enum class Phase { kHeaders, kBody, kHandling };
  int fd = -1;
  Phase phase = Phase::kHeaders;
  absl::Time ready;         // when the connection became ready for its current request
  absl::Time headers_done;  // when its current request's headers were in
  int64_t body_bytes = 0;   // of its current request's body, so far
  bool reserved = false;
  bool cut = false;
};

ConnectionDeadlines::ConnectionDeadlines(absl::Duration header_timeout,
                                         absl::Duration request_timeout,
                                         std::function<void()> on_cut)
    : ConnectionDeadlines(
          Limits{.header_timeout = header_timeout, .request_timeout = request_timeout},
          std::move(on_cut)) {}

ConnectionDeadlines::ConnectionDeadlines(const Limits& limits, std::function<void()> on_cut)
    : limits_(limits), on_cut_(std::move(on_cut)) {
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
  auto* c = new Connection();
  c->fd = fd;
  c->ready = absl::Now();
  absl::MutexLock lock(&mu_);
  c->reserved = limits_.normal_connections > 0 &&
                open_.size() >= static_cast<size_t>(limits_.normal_connections);
  open_.insert(c);
  return c;
}

void ConnectionDeadlines::HeadersDone(Connection* c) {
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mu_);
  c->phase = Connection::Phase::kBody;
  c->headers_done = now;
  c->body_bytes = 0;
}

void ConnectionDeadlines::BodyBytes(Connection* c, size_t bytes) {
  absl::MutexLock lock(&mu_);
  c->body_bytes += static_cast<int64_t>(bytes);
}

bool ConnectionDeadlines::Reserved(const Connection* c) const {
  absl::MutexLock lock(&mu_);
  return c->reserved;
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
  absl::Duration shortest = std::min(limits_.header_timeout, limits_.request_timeout);
  if (limits_.min_body_bytes_per_second > 0) {
    shortest = std::min(shortest, limits_.body_grace);
  }
  const absl::Duration tick =
      std::clamp(shortest / 10, absl::Milliseconds(10), absl::Milliseconds(250));
  absl::MutexLock lock(&mu_);
  while (!mu_.AwaitWithTimeout(absl::Condition(&stop_), tick)) {
    const absl::Time now = absl::Now();
    for (Connection* c : open_) {
      if (c->cut || c->phase == Connection::Phase::kHandling) continue;
      const absl::Duration limit = c->phase == Connection::Phase::kHeaders
                                       ? limits_.header_timeout
                                       : limits_.request_timeout;
      bool slow_body = false;
      if (c->phase == Connection::Phase::kBody && limits_.min_body_bytes_per_second > 0) {
        const absl::Duration body_time = now - c->headers_done;
        slow_body = body_time >= limits_.body_grace &&
                    static_cast<double>(c->body_bytes) <
                        limits_.min_body_bytes_per_second * absl::ToDoubleSeconds(body_time);
      }
      if (now - c->ready < limit && !slow_body) continue;
      // The socket stays open (its thread closes it): Closed() cannot race with this call.
      shutdown(c->fd, SHUT_RDWR);
      c->cut = true;
      ++cut_;
      if (on_cut_ != nullptr) on_cut_();
    }
  }
}

}  // namespace deniable::server::http

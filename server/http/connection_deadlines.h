// Deadlines for the HTTP listener's connections, which its library does not keep: a client must
// send a request's headers within `header_timeout` of the connection being ready for that request
// (opened, or done with its previous request), and the whole request, headers and body, within
// `request_timeout`. A connection past its deadline is shut down (shutdown(2) on its socket, so
// the listener's own thread sees it end and closes it). This is what stops a slow-loris client,
// which keeps a connection open by trickling header lines a byte at a time: an idle timeout
// restarts at every byte, a deadline does not. An idle kept-alive connection is closed after
// `header_timeout` too. While the server works on a request (after its body is in) no deadline
// runs: the server's own time is not the client's.
//
// A minimum body rate (issue 38): a client that sends good headers and then its body a byte a
// second holds its connection until the request deadline (60 s), and a few such clients fill
// the listener. With `min_body_bytes_per_second` > 0, a connection whose body, `body_grace`
// after its headers or later, has brought fewer than min_body_bytes_per_second times the time
// since its headers is shut down too (a body that arrives whole never is).
//
// Reserved connections: with `normal_connections` > 0, a connection opened while that many or
// more are open is Reserved(): the listener answers only its health checks on it.
//
// Example (the listener's callbacks):
//   ConnectionDeadlines deadlines(absl::Seconds(10), absl::Seconds(60));
//   ConnectionDeadlines::Connection* c = deadlines.Opened(fd);  // on accept
//   deadlines.HeadersDone(c);  deadlines.RequestDone(c);  // per request
//   deadlines.Closed(c);  // before the socket is closed
//
// Thread-safe: each connection's calls come from its own thread, the watchdog runs on one more.
// Times come from absl::Now(): the deadlines are the wall clock's by nature.
#ifndef DENIABLE_SERVER_HTTP_CONNECTION_DEADLINES_H_
#define DENIABLE_SERVER_HTTP_CONNECTION_DEADLINES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace deniable::server::http {

class ConnectionDeadlines {
 public:
  // One open connection; owned by ConnectionDeadlines from Opened to Closed.
  struct Connection;

  struct Limits {
    absl::Duration header_timeout = absl::Seconds(10);   // > 0
    absl::Duration request_timeout = absl::Seconds(60);  // > 0
    double min_body_bytes_per_second = 0;                // 0: no minimum body rate
    absl::Duration body_grace = absl::Seconds(5);        // before the body rate is checked
    int normal_connections = 0;                          // 0: none is Reserved()
  };

  // REQUIRES: both timeouts > 0. Starts the watchdog thread. `on_cut`, when set, is called on
  // the watchdog's thread for each connection shut down (a metrics counter).
  ConnectionDeadlines(absl::Duration header_timeout, absl::Duration request_timeout,
                      std::function<void()> on_cut = nullptr);
  // The same with every limit. REQUIRES: as above, min_body_bytes_per_second >= 0.
  explicit ConnectionDeadlines(const Limits& limits, std::function<void()> on_cut = nullptr);
  ~ConnectionDeadlines();  // stops the watchdog; REQUIRES: every connection Closed

  ConnectionDeadlines(const ConnectionDeadlines&) = delete;
  ConnectionDeadlines& operator=(const ConnectionDeadlines&) = delete;

  // A connection on socket `fd` opened: the header clock starts.
  Connection* Opened(int fd);
  // Its request's headers are in: the request clock (started with the header clock) runs on.
  void HeadersDone(Connection* connection);
  // `bytes` more of its request's body arrived (for the minimum body rate).
  void BodyBytes(Connection* connection, size_t bytes);
  // Its whole request is in: no deadline until RequestDone.
  void BodyDone(Connection* connection);
  // Whether `connection` was opened while normal_connections or more were open (then only
  // health checks are answered on it).
  bool Reserved(const Connection* connection) const;
  // Its answer is sent: the header clock of the next request starts.
  void RequestDone(Connection* connection);
  // The connection ends. REQUIRES: called before its socket is closed (so the watchdog never
  // shuts down a socket number reused by a newer connection); frees `connection`.
  void Closed(Connection* connection);

  // Connections shut down for a missed deadline since the start.
  int64_t cut() const;

 private:
  void Watch();

  const Limits limits_;
  const std::function<void()> on_cut_;
  mutable absl::Mutex mu_;
  absl::flat_hash_set<Connection*> open_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int64_t cut_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread watchdog_;
};

}  // namespace deniable::server::http

#endif  // DENIABLE_SERVER_HTTP_CONNECTION_DEADLINES_H_

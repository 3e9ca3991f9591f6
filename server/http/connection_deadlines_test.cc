#include "server/http/connection_deadlines.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace deniable::server::http {
namespace {
namespace connection_deadlines_test {

// Waits (at most 10 s) for the far end of a socket pair to see the near end shut down: the event
// the deadline produces, never a fixed sleep.
bool PeerSeesShutdown(int peer) {
  pollfd p{.fd = peer, .events = POLLIN, .revents = 0};
  if (poll(&p, 1, 10'000) != 1) return false;
  char byte;
  return read(peer, &byte, 1) == 0;
}

class SocketPair {
 public:
  SocketPair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  ~SocketPair() {
    close(fds_[0]);
    close(fds_[1]);
  }
  int server() const { return fds_[0]; }
  int client() const { return fds_[1]; }

 private:
  int fds_[2] = {-1, -1};
};

TEST(ConnectionDeadlinesTest, ShutsDownAConnectionThatMissesItsHeaderDeadline) {
  ConnectionDeadlines deadlines(absl::Milliseconds(50), absl::Seconds(60));
  SocketPair pair;
  ConnectionDeadlines::Connection* c = deadlines.Opened(pair.server());
  EXPECT_TRUE(PeerSeesShutdown(pair.client()));
  EXPECT_EQ(deadlines.cut(), 1);
  deadlines.Closed(c);
}

TEST(ConnectionDeadlinesTest, ShutsDownARequestWhoseBodyMissesTheRequestDeadline) {
  ConnectionDeadlines deadlines(absl::Seconds(60), absl::Milliseconds(50));
  SocketPair pair;
  ConnectionDeadlines::Connection* c = deadlines.Opened(pair.server());
  deadlines.HeadersDone(c);  // the body is awaited: the request deadline runs
  EXPECT_TRUE(PeerSeesShutdown(pair.client()));
  EXPECT_EQ(deadlines.cut(), 1);
  deadlines.Closed(c);
}

// Issue 38: a body trickled below the minimum rate is cut after the grace, long before the
// request deadline (60 s here); the bytes it did send count.
TEST(ConnectionDeadlinesTest, ShutsDownABodySlowerThanTheMinimumRate) {
  ConnectionDeadlines deadlines({.header_timeout = absl::Seconds(60),
                                 .request_timeout = absl::Seconds(60),
                                 .min_body_bytes_per_second = 1024,
                                 .body_grace = absl::Milliseconds(50)});
  SocketPair pair;
  ConnectionDeadlines::Connection* c = deadlines.Opened(pair.server());
  deadlines.HeadersDone(c);
  deadlines.BodyBytes(c, 1);  // one byte: far below 1024 a second once 50 ms have passed
  EXPECT_TRUE(PeerSeesShutdown(pair.client()));
  EXPECT_EQ(deadlines.cut(), 1);
  deadlines.Closed(c);
}

// A connection opened while normal_connections are open is reserved (for health checks); one
// opened after some closed is not.
TEST(ConnectionDeadlinesTest, ConnectionsPastTheNormalOnesAreReserved) {
  ConnectionDeadlines deadlines({.normal_connections = 2});
  SocketPair a, b, c, d;
  ConnectionDeadlines::Connection* first = deadlines.Opened(a.server());
  ConnectionDeadlines::Connection* second = deadlines.Opened(b.server());
  ConnectionDeadlines::Connection* third = deadlines.Opened(c.server());
  EXPECT_FALSE(deadlines.Reserved(first));
  EXPECT_FALSE(deadlines.Reserved(second));
  EXPECT_TRUE(deadlines.Reserved(third));
  deadlines.Closed(first);
  ConnectionDeadlines::Connection* fourth = deadlines.Opened(d.server());
  EXPECT_TRUE(deadlines.Reserved(fourth));  // second, third and it: 2 were open before it
  deadlines.Closed(second);
  deadlines.Closed(third);
  deadlines.Closed(fourth);
  EXPECT_EQ(deadlines.cut(), 0);
}

}  // namespace connection_deadlines_test
}  // namespace
}  // namespace deniable::server::http

#include "server/http/connection_deadlines.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace deniable::server::http {
namespace {

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

}  // namespace
}  // namespace deniable::server::http

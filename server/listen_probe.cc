#include "server/listen_probe.h"

#include <netdb.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace deniable::server {
namespace {

// The reason for bind()'s `error`, or "" for one a probe does not explain.
std::string Reason(int error, int port) {
  switch (error) {
    case EADDRINUSE:
      return absl::StrCat("address in use: another process listens on port ", port,
                          " (stop it, or pick another port)");
    case EACCES:
      return absl::StrCat("permission denied: port ", port,
                          " needs privileges (ports below 1024 do), or pick another port");
    case EADDRNOTAVAIL:
      return "address not available: no network interface of this machine has it";
    default:
      return error == 0 ? "" : std::strerror(error);
  }
}

}  // namespace

std::string BindFailureReason(const sockaddr* address, socklen_t length, int port) {
  const int fd = socket(address->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  const int one = 1;
  (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const int error = bind(fd, address, length) == 0 ? 0 : errno;
  close(fd);
  return Reason(error, port);
}

std::string BindFailureReason(absl::string_view address) {
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos) return "";
  absl::string_view host = address.substr(0, colon);
  int port = 0;
  if (!absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 || port > 65535) return "";
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* resolved = nullptr;
  const std::string host_string(host), port_string = std::to_string(port);
  if (getaddrinfo(host_string.empty() ? nullptr : host_string.c_str(), port_string.c_str(), &hints,
                  &resolved) != 0) {
    return "";
  }
  std::string reason;
  for (const addrinfo* a = resolved; a != nullptr; a = a->ai_next) {
    reason = BindFailureReason(a->ai_addr, a->ai_addrlen, port);
    if (reason.empty()) break;
  }
  freeaddrinfo(resolved);
  return reason;
}

}  // namespace deniable::server

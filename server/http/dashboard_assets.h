// The dashboard's static files (server/http/dashboard/ and Debian's Chart.js), embedded into the
// binary at build time by server/http/embed_assets.cmake: nothing is read from disk or fetched
// from a network when the page is served.
#ifndef DENIABLE_SERVER_HTTP_DASHBOARD_ASSETS_H_
#define DENIABLE_SERVER_HTTP_DASHBOARD_ASSETS_H_

#include <string_view>

namespace deniable::server::http {

struct DashboardFile {
  std::string_view content;
  const char* content_type;
};

// The file served at "/<name>" ("" is index.html); nullptr when there is none. Thread-safe.
const DashboardFile* DashboardAsset(std::string_view name);

}  // namespace deniable::server::http

#endif  // DENIABLE_SERVER_HTTP_DASHBOARD_ASSETS_H_

// The Deniable release this SDK belongs to: the single version set in the top-level
// CMakeLists.txt (project(deniable VERSION ...)), which every binary reports with --version.
//
// Example:
//   std::printf("deniable SDK %s\n", deniable::client::Version());
//
// Thread-safe (constant strings).
#ifndef DENIABLE_CLIENT_VERSION_H_
#define DENIABLE_CLIENT_VERSION_H_

namespace deniable::client {

// The release, "MAJOR.MINOR.PATCH" (for example "0.1.0"). Never null.
const char* Version();

// How this library was built: "<build type>, <compiler> <compiler version>". Never null.
const char* BuildInfo();

}  // namespace deniable::client

#endif  // DENIABLE_CLIENT_VERSION_H_

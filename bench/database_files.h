// The files of a SQLite collector database, for the benchmarks: the main file, its keyed reports
// file ("-reports", server/storage/sqlite/sqlite_keyed_file.h) and their WAL and shared-memory
// files. Header-only, so that a bench without gRPC (deniable-sparse-bench) shares them with
// sqlite_load.h's users.
#ifndef DENIABLE_BENCH_DATABASE_FILES_H_
#define DENIABLE_BENCH_DATABASE_FILES_H_

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

namespace deniable::bench {

// Size of the database at `path` in bytes: the main file, its keyed reports file and their WALs.
inline int64_t DatabaseBytes(const std::string& path) {
  int64_t bytes = 0;
  for (const char* suffix : {"", "-wal", "-reports", "-reports-wal"}) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path + suffix, ec);
    if (!ec) bytes += static_cast<int64_t>(size);
  }
  return bytes;
}

// Deletes the database file, its keyed reports file and their WAL and shared-memory files.
inline void RemoveDatabase(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-reports", "-reports-wal", "-reports-shm"}) {
    std::remove((path + suffix).c_str());
  }
}

}  // namespace deniable::bench

#endif  // DENIABLE_BENCH_DATABASE_FILES_H_

#include "server/storage/moved_ids_filter.h"

#include <utility>

#include "absl/hash/hash.h"

namespace deniable::server {
namespace {

constexpr int kProbes = 7;
constexpr size_t kFirstWords = 1 << 14;  // 128 KiB, 104 857 ids

// Two hashes for double hashing (Kirsch and Mitzenmacher, "Less hashing, same performance",
// 2006); absl::Hash is seeded per process, so clients cannot choose ids that collide.
struct Probe {
  uint64_t h1, h2;
};

Probe ProbeOf(const ReportId& id) {
  const uint64_t h = absl::Hash<ReportId>{}(id);
  return {h, ((h >> 32) | (h << 32)) * 0x9E3779B97F4A7C15ULL | 1};
}

}  // namespace

void MovedIdsFilter::Add(const ReportId& id) {
  if (segments_.empty() || segments_.back().count >= segments_.back().capacity) {
    Segment s;
    s.words.assign(segments_.empty() ? kFirstWords : 2 * segments_.back().words.size(), 0);
    s.capacity = static_cast<int64_t>(s.words.size()) * 64 / 10;  // 10 bits per id
    segments_.push_back(std::move(s));
  }
  Segment& s = segments_.back();
  const uint64_t mask = s.words.size() * 64 - 1;
  const Probe p = ProbeOf(id);
  for (int i = 0; i < kProbes; ++i) {
    const uint64_t bit = (p.h1 + static_cast<uint64_t>(i) * p.h2) & mask;
    s.words[bit >> 6] |= uint64_t{1} << (bit & 63);
  }
  ++s.count;
}

bool MovedIdsFilter::MayContain(const ReportId& id) const {
  const Probe p = ProbeOf(id);
  for (const Segment& s : segments_) {
    const uint64_t mask = s.words.size() * 64 - 1;
    bool all = true;
    for (int i = 0; i < kProbes && all; ++i) {
      const uint64_t bit = (p.h1 + static_cast<uint64_t>(i) * p.h2) & mask;
      all = (s.words[bit >> 6] >> (bit & 63)) & 1;
    }
    if (all) return true;
  }
  return false;
}

int64_t MovedIdsFilter::bytes() const {
  int64_t n = 0;
  for (const Segment& s : segments_) n += static_cast<int64_t>(s.words.size() * sizeof(uint64_t));
  return n;
}

}  // namespace deniable::server

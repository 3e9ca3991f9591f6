#include "server/storage/sqlite/moved_ids_filter.h"

#include <utility>

#include "absl/hash/hash.h"

namespace deniable::server {
namespace {

constexpr int kProbes = 8;
constexpr int kBitsPerId = 16;
constexpr size_t kFirstWords = 1 << 14;  // 128 KiB, 65 536 ids
constexpr size_t kBlockWords = 8;        // 512 bits: one cache line

// Two hashes (Kirsch and Mitzenmacher, "Less hashing, same performance", 2006): h1 picks the
// block (its low bits), seven 9-bit fields of h2 and bits 48-56 of h1 the bits in it; absl::Hash is
// seeded per process, so clients cannot choose ids that collide.
struct Probe {
  uint64_t h1, h2;
};

Probe ProbeOf(const ReportId& id) {
  const uint64_t h = absl::Hash<ReportId>{}(id);
  return {h, ((h >> 32) | (h << 32)) * 0x9E3779B97F4A7C15ULL | 1};
}

// The i-th of the id's bits in its block (0..511).
uint64_t BitOf(const Probe& p, int i) { return (i < 7 ? p.h2 >> (9 * i) : p.h1 >> 48) & 511; }

}  // namespace

void MovedIdsFilter::Add(const ReportId& id) {
  if (segments_.empty() || segments_.back().count >= segments_.back().capacity) {
    Segment s;
    s.words.assign(segments_.empty() ? kFirstWords : 2 * segments_.back().words.size(), 0);
    s.capacity = static_cast<int64_t>(s.words.size()) * 64 / kBitsPerId;
    segments_.push_back(std::move(s));
  }
  Segment& s = segments_.back();
  const Probe p = ProbeOf(id);
  uint64_t* block = &s.words[(p.h1 & (s.words.size() / kBlockWords - 1)) * kBlockWords];
  for (int i = 0; i < kProbes; ++i) {
    const uint64_t bit = BitOf(p, i);
    block[bit >> 6] |= uint64_t{1} << (bit & 63);
  }
  ++s.count;
}

void MovedIdsFilter::Prefetch(const ReportId& id, bool for_add) const {
  const uint64_t h1 = ProbeOf(id).h1;
  for (size_t i = for_add && !segments_.empty() ? segments_.size() - 1 : 0; i < segments_.size();
       ++i) {
    const Segment& s = segments_[i];
    __builtin_prefetch(&s.words[(h1 & (s.words.size() / kBlockWords - 1)) * kBlockWords]);
  }
}

bool MovedIdsFilter::MayContain(const ReportId& id) const {
  const Probe p = ProbeOf(id);
  for (const Segment& s : segments_) {
    const uint64_t* block = &s.words[(p.h1 & (s.words.size() / kBlockWords - 1)) * kBlockWords];
    bool all = true;
    for (int i = 0; i < kProbes && all; ++i) {
      const uint64_t bit = BitOf(p, i);
      all = (block[bit >> 6] >> (bit & 63)) & 1;
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

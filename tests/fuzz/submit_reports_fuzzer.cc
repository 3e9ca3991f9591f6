// libFuzzer target: arbitrary bytes -> SubmitReportsRequest parsing -> the ingestor's validation
// -> storage (MemoryStorage). Besides crashes and sanitizer reports, it aborts when a promise
// breaks: a rejected batch changed the store, an accepted one stored a different number of
// reports than it acknowledged, or an error message does not name a field.
//
// Built two ways: with -fsanitize=fuzzer (tests/fuzz/run_fuzz.sh, clang) and, in the normal
// build, with DENIABLE_FUZZ_REPLAY_MAIN: a main that replays files (the seed corpus and past
// crashes) as a regression test.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/clock.h"
#include "deniable/v1/query_service.pb.h"
#include "deniable/v1/report_service.pb.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/storage/memory/memory_storage.h"

namespace {

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;

// A store with two metrics: "m" (two-coin, hourly) and "d" (two design versions, daily).
struct Env {
  Env()
      : clock(absl::FromUnixSeconds(kNow)),
        registry(&storage, &clock),
        ingestor(&registry, &storage, &clock, {.max_batch_reports = 64}) {
    deniable::v1::CreateMetricRequest m;
    m.set_name("m");
    m.mutable_design()->mutable_two_coin();
    deniable::v1::CreateMetricRequest d;
    d.set_name("d");
    d.set_time_precision_seconds(86400);
    d.mutable_design()->mutable_symmetric_epsilon()->set_epsilon(1.0);
    deniable::v1::AddDesignVersionRequest v2;
    v2.set_metric("d");
    v2.mutable_design()->mutable_tails_says_yes();
    if (!registry.Create(m).ok() || !registry.Create(d).ok() || !registry.AddVersion(v2).ok()) {
      std::abort();
    }
  }
  deniable::FakeClock clock;
  deniable::server::MemoryStorage storage;
  deniable::server::MetricRegistry registry;
  deniable::server::Ingestor ingestor;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::unique_ptr<Env> env;
  static int runs = 0;
  if (env == nullptr || ++runs % 20000 == 0) env = std::make_unique<Env>();  // bounded memory
  deniable::v1::SubmitReportsRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  const int64_t before = env->storage.ReportCount();
  absl::StatusOr<deniable::v1::SubmitReportsResponse> result = env->ingestor.Submit(request);
  const int64_t after = env->storage.ReportCount();
  if (result.ok()) {
    // Every report is accounted for once: stored, duplicate or rejected on its own, the
    // rejections in index order, each naming its report and bounded in size.
    bool ordered = true;
    for (int i = 0; i < result->rejections_size(); ++i) {
      const auto& r = result->rejections(i);
      ordered = ordered && static_cast<int>(r.index()) < request.reports_size() &&
                (i == 0 || r.index() > result->rejections(i - 1).index()) &&
                absl::StartsWith(r.reason(), absl::StrCat("reports[", r.index(), "]")) &&
                r.reason().size() < 1024;
    }
    if (static_cast<int64_t>(result->accepted()) + result->duplicates() +
                result->rejections_size() !=
            request.reports_size() ||
        after - before != result->accepted() || !ordered) {
      std::fprintf(stderr, "acknowledged %u+%u+%d rejected of %d, stored %lld, ordered %d\n",
                   result->accepted(), result->duplicates(), result->rejections_size(),
                   request.reports_size(), static_cast<long long>(after - before), ordered);
      std::abort();
    }
  } else if (after != before || !absl::StartsWith(result.status().message(), "reports")) {
    std::fprintf(stderr, "rejected batch: stored %lld, message \"%s\"\n",
                 static_cast<long long>(after - before),
                 std::string(result.status().message()).c_str());
    std::abort();
  }
  return 0;
}

#ifdef DENIABLE_FUZZ_REPLAY_MAIN
// Replays every file under the given files or directories; exits non-zero if none was found.
int main(int argc, char** argv) {
  int replayed = 0;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path root(argv[i]);
    auto replay = [&](const std::filesystem::path& p) {
      std::ifstream in(p, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++replayed;
    };
    if (std::filesystem::is_directory(root)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
        if (entry.is_regular_file()) replay(entry.path());
      }
    } else {
      replay(root);
    }
  }
  std::printf("replayed %d inputs\n", replayed);
  return replayed > 0 ? 0 : 1;
}
#endif

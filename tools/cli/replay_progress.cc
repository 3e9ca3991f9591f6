#include "tools/cli/replay_progress.h"

#include <unistd.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace deniable::tools {
namespace {

std::string ShortDuration(double seconds) {
  const int64_t s = static_cast<int64_t>(std::ceil(seconds));
  if (s < 60) return absl::StrCat(s, "s");
  if (s < 3600) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  return absl::StrFormat("%dh%02dm", s / 3600, (s % 3600) / 60);
}

}  // namespace

bool StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

std::string FormatProgress(int64_t done, int64_t total, absl::Duration elapsed) {
  const double share =
      total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0;
  const double seconds = absl::ToDoubleSeconds(elapsed);
  std::string rate = "-";
  std::string eta = "-";
  if (done > 0 && seconds > 0) {
    const double per_second = static_cast<double>(done) / seconds;
    rate = absl::StrFormat("%.1f/s", per_second);
    eta = ShortDuration(static_cast<double>(total - done) / per_second);
  }
  return absl::StrFormat("replay: %d/%d respondents (%.1f %%), %s, ETA %s", done, total, share,
                         rate, eta);
}

ProgressLine::ProgressLine(std::FILE* out, bool enabled, const Clock* clock,
                           absl::Duration interval)
    : out_(out), enabled_(enabled), clock_(clock), interval_(interval), start_(clock->Now()) {}

void ProgressLine::Update(int64_t done, int64_t total) {
  if (!enabled_) return;
  const absl::Time now = clock_->Now();
  if (done < total && now - last_draw_ < interval_) return;
  last_draw_ = now;
  // \r returns to the line's start, \033[K clears what a longer previous line left.
  std::fprintf(out_, "\r%s\033[K", FormatProgress(done, total, now - start_).c_str());
  std::fflush(out_);
  drawn_ = true;
}

void ProgressLine::Finish() {
  if (!drawn_) return;
  std::fputc('\n', out_);
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace deniable::tools

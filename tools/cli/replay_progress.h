// Progress of `deniable replay` on a terminal: respondents done, rate and time left, redrawn on
// one stderr line ("\r...") at most every `interval`, and only when stderr is a terminal, so that
// a replay piped into a file or another program prints nothing extra.
//
// Example:
//   ProgressLine progress(stderr, StderrIsTerminal(), SystemClock::Default());
//   for (...) progress.Update(done, total);
//   progress.Finish();
//
// Thread-compatible. Does not own `out` or `clock`.
#ifndef DENIABLE_TOOLS_CLI_REPLAY_PROGRESS_H_
#define DENIABLE_TOOLS_CLI_REPLAY_PROGRESS_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/time/time.h"
#include "deniable/common/clock.h"

namespace deniable::tools {

// True when stderr is a terminal (isatty).
bool StderrIsTerminal();

// "replay: 1200/2700 respondents (44.4 %), 350.2/s, ETA 4s" after `elapsed`; the rate and ETA
// read "-" until a respondent is done. The ETA is (total - done) / rate, shown as 4s, 1m05s or
// 2h03m.
std::string FormatProgress(int64_t done, int64_t total, absl::Duration elapsed);

class ProgressLine {
 public:
  // `enabled` false: prints nothing at all. `clock` must outlive this object.
  ProgressLine(std::FILE* out, bool enabled, const Clock* clock,
               absl::Duration interval = absl::Milliseconds(200));

  // Redraws the line when `interval` passed since the last draw, and always at done == total.
  void Update(int64_t done, int64_t total);

  // Ends the line (a newline) if anything was drawn.
  void Finish();

 private:
  std::FILE* const out_;
  const bool enabled_;
  const Clock* const clock_;
  const absl::Duration interval_;
  const absl::Time start_;
  absl::Time last_draw_ = absl::InfinitePast();
  bool drawn_ = false;
};

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_REPLAY_PROGRESS_H_

#include "tools/cli/series_plot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_format.h"

namespace deniable::tools {
namespace {
namespace series_plot_test {

using ::testing::HasSubstr;

constexpr int64_t kDay = 86400;
constexpr int64_t kStart = 1700006400;  // a midnight, UTC

v1::Prevalence Bucket(int day, double lower, double estimate, double upper, uint32_t version,
                      bool suppressed = false) {
  v1::Prevalence b;
  b.set_start_time_seconds(kStart + day * kDay);
  b.set_end_time_seconds(kStart + (day + 1) * kDay);
  b.set_confidence_level(0.95);
  b.set_suppressed(suppressed);
  if (!suppressed) {
    b.set_ci_lower(lower);
    b.set_estimate_clipped(estimate);
    b.set_ci_upper(upper);
    b.add_versions()->set_design_version(version);
  }
  return b;
}

// Six days: two runs of estimates split by a suppressed day, design version 2 from day 4.
v1::Series SixDays() {
  v1::Series s;
  s.set_metric("smokes");
  s.set_bucket(v1::DAY);
  *s.add_buckets() = Bucket(0, 0.10, 0.20, 0.30, 1);
  *s.add_buckets() = Bucket(1, 0.12, 0.22, 0.32, 1);
  *s.add_buckets() = Bucket(2, 0, 0, 0, 0, /*suppressed=*/true);
  *s.add_buckets() = Bucket(3, 0.15, 0.25, 0.35, 1);
  *s.add_buckets() = Bucket(4, 0.18, 0.28, 0.38, 2);
  *s.add_buckets() = Bucket(5, 0.20, 0.30, 0.40, 2);
  return s;
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/plot_" + std::to_string(::getpid()) + "_" + name;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// PLplot's svg driver writes text as hexadecimal character references ("&#x73;" for 's').
std::string Entities(const std::string& text) {
  std::string out;
  for (unsigned char c : text) out += absl::StrFormat("&#x%x;", c);
  return out;
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(SeriesPlotTest, DrawsTheBandPerRunTheLineTheSuppressedDayAndTheVersionChange) {
  const std::string path = TempPath("six.svg");
  ASSERT_TRUE(WriteSeriesPlot(SixDays(), path).ok());
  const std::string svg = Read(path);
  std::remove(path.c_str());
  ASSERT_NE(svg.find("<svg"), std::string::npos);
  // Two interval bands (days 0-1 and 3-5; the suppressed day breaks the band), drawn in the
  // band color (190, 215, 240) = #BED7F0.
  EXPECT_EQ(Count(svg, "fill=\"#BED7F0\""), 2);
  EXPECT_GE(Count(svg, "#1F5FAA"), 2);  // the estimate's color (31, 95, 170)
  EXPECT_GE(Count(svg, "#969696"), 1);  // the suppressed day's marker (150, 150, 150)
  EXPECT_GE(Count(svg, "#C83C28"), 1);  // the version change (200, 60, 40)
  EXPECT_EQ(Count(svg, Entities("smokes: debiased estimate")), 1);  // the title names the metric
}

// A numeric metric's series: the mean (one_bit_mean) or the median (d_bit_flip) over [lo, hi].
v1::Series NumericDays(const std::string& mechanism) {
  v1::Series s;
  s.set_metric("age");
  s.set_bucket(v1::DAY);
  for (int day = 0; day < 3; ++day) {
    v1::Prevalence b = Bucket(day, 0, 0, 0, 1);
    v1::NumericEstimate* e = b.mutable_numeric();
    e->set_lo(18);
    e->set_hi(90);
    e->set_unit("years");
    e->set_mechanism(mechanism);
    e->set_mean(38 + day);
    e->set_mean_ci_lower(35 + day);
    e->set_mean_ci_upper(41 + day);
    if (mechanism == "d_bit_flip" && day != 1) {  // day 1 carries no median: left out
      v1::NumericQuantile* q = e->add_quantiles();
      q->set_level(0.5);
      q->set_value(40);
      q->set_ci_lower(30);
      q->set_ci_upper(50);
    }
    *s.add_buckets() = b;
  }
  return s;
}

TEST(SeriesPlotTest, DrawsANumericMetricsMeanOrMedianInItsUnit) {
  const std::string path = TempPath("age.svg");
  ASSERT_TRUE(WriteSeriesPlot(NumericDays("one_bit_mean"), path).ok());
  std::string svg = Read(path);
  EXPECT_EQ(Count(svg, "fill=\"#BED7F0\""), 1);  // one band over the three days
  EXPECT_EQ(Count(svg, Entities("age: debiased mean")), 1);
  EXPECT_EQ(Count(svg, Entities("mean (years)")), 1);
  ASSERT_TRUE(WriteSeriesPlot(NumericDays("d_bit_flip"), path).ok());
  svg = Read(path);
  std::remove(path.c_str());
  EXPECT_EQ(Count(svg, Entities("age: median from the histogram")), 1);
  EXPECT_EQ(Count(svg, Entities("median (years)")), 1);
  // Days 0 and 2 have a median, day 1 none: two single-bucket runs, no filled band.
  EXPECT_EQ(Count(svg, "fill=\"#BED7F0\""), 0);
}

TEST(SeriesPlotTest, WritesAPdfWhenTheNameSaysSo) {
  const std::string path = TempPath("six.pdf");
  ASSERT_TRUE(WriteSeriesPlot(SixDays(), path).ok());
  const std::string pdf = Read(path);
  std::remove(path.c_str());
  EXPECT_EQ(pdf.rfind("%PDF", 0), 0u);
}

TEST(SeriesPlotTest, RefusesAnotherFormatAnEmptySeriesAndAnUnwritablePath) {
  absl::Status png = WriteSeriesPlot(SixDays(), TempPath("six.png"));
  EXPECT_EQ(png.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(png.message()), HasSubstr("plot:"));
  absl::Status empty = WriteSeriesPlot(v1::Series(), TempPath("empty.svg"));
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  absl::Status nowhere = WriteSeriesPlot(SixDays(), "/nonexistent-dir/x.svg");
  EXPECT_EQ(nowhere.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(nowhere.message()), HasSubstr("/nonexistent-dir/x.svg"));
}

}  // namespace series_plot_test
}  // namespace
}  // namespace deniable::tools

// The figures a benchmark run prints beside their raw limits, and their JSON file (--json).
#ifndef DENIABLE_BENCH_FIGURES_JSON_H_
#define DENIABLE_BENCH_FIGURES_JSON_H_

#include <string>

#include "google/protobuf/struct.pb.h"

namespace deniable::bench {

// One figure: a measured value beside the raw limit of the same machine it is compared with.
struct Figure {
  std::string name, unit;
  double value;
  std::string limit_name;
  double limit;
  std::string target;  // e.g. ">= 0.40" on the ratio, or "< 1 ms" on the value; may be empty
};

// value / limit, or 0 when the limit is not positive (not measured).
double Ratio(const Figure& f);

// Appends `f` to json["figures"] as {name, unit, value, limit_name, limit, ratio, target}: the
// one shape of every run's JSON (the SQLite and the PostgreSQL run, bench/plot.py reads it).
void AddFigure(google::protobuf::Struct* json, const Figure& f);

// Writes `json` to `path` (indented) and prints "wrote <path>". Not thread-safe for one path.
void WriteJson(const google::protobuf::Struct& json, const std::string& path);

}  // namespace deniable::bench

#endif  // DENIABLE_BENCH_FIGURES_JSON_H_

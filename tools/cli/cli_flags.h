// Flags of the deniable command-line tool (defined in cli_flags.cc, shared by all commands).
#ifndef DENIABLE_TOOLS_CLI_CLI_FLAGS_H_
#define DENIABLE_TOOLS_CLI_CLI_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/declare.h"

ABSL_DECLARE_FLAG(std::string, target);
ABSL_DECLARE_FLAG(double, timeout_seconds);
ABSL_DECLARE_FLAG(std::string, token);
ABSL_DECLARE_FLAG(std::string, tls_ca_file);
ABSL_DECLARE_FLAG(std::string, tls_cert_file);
ABSL_DECLARE_FLAG(std::string, tls_key_file);
ABSL_DECLARE_FLAG(std::string, tls_server_name);
ABSL_DECLARE_FLAG(bool, json);
ABSL_DECLARE_FLAG(std::string, name);
ABSL_DECLARE_FLAG(std::string, description);
ABSL_DECLARE_FLAG(std::string, design);
ABSL_DECLARE_FLAG(double, epsilon);
ABSL_DECLARE_FLAG(std::vector<std::string>, categories);
ABSL_DECLARE_FLAG(std::vector<std::string>, shares);
ABSL_DECLARE_FLAG(double, p);
ABSL_DECLARE_FLAG(double, q);
ABSL_DECLARE_FLAG(double, pi_b);
ABSL_DECLARE_FLAG(double, gamma);
ABSL_DECLARE_FLAG(int, time_precision_seconds);
ABSL_DECLARE_FLAG(int, min_reports);
ABSL_DECLARE_FLAG(std::string, reporting_period);
ABSL_DECLARE_FLAG(bool, window_flags);
ABSL_DECLARE_FLAG(std::string, window);
ABSL_DECLARE_FLAG(double, reports_per_device);
ABSL_DECLARE_FLAG(std::string, randomization);
ABSL_DECLARE_FLAG(int, retention_days);
ABSL_DECLARE_FLAG(std::string, retention_policy);
ABSL_DECLARE_FLAG(int, days);
ABSL_DECLARE_FLAG(std::string, policy);
ABSL_DECLARE_FLAG(bool, allow_no_privacy);
ABSL_DECLARE_FLAG(std::string, metric);
ABSL_DECLARE_FLAG(std::string, start);
ABSL_DECLARE_FLAG(std::string, end);
ABSL_DECLARE_FLAG(double, level);
ABSL_DECLARE_FLAG(std::string, method);
ABSL_DECLARE_FLAG(std::string, combination);
ABSL_DECLARE_FLAG(std::string, group_by);
ABSL_DECLARE_FLAG(std::string, bucket);
ABSL_DECLARE_FLAG(std::string, simultaneous);
ABSL_DECLARE_FLAG(std::string, plot);
ABSL_DECLARE_FLAG(std::string, service);
ABSL_DECLARE_FLAG(std::string, metric2);
ABSL_DECLARE_FLAG(std::string, start2);
ABSL_DECLARE_FLAG(std::string, end2);
ABSL_DECLARE_FLAG(double, prior);
ABSL_DECLARE_FLAG(int64_t, n);
ABSL_DECLARE_FLAG(double, half_width);
ABSL_DECLARE_FLAG(std::string, csv);
ABSL_DECLARE_FLAG(std::string, column);
ABSL_DECLARE_FLAG(std::string, yes);
ABSL_DECLARE_FLAG(std::vector<std::string>, label_columns);
ABSL_DECLARE_FLAG(std::string, blank);
ABSL_DECLARE_FLAG(std::string, time_column);
ABSL_DECLARE_FLAG(std::string, time_format);
ABSL_DECLARE_FLAG(std::string, spread);
ABSL_DECLARE_FLAG(bool, import);

#endif  // DENIABLE_TOOLS_CLI_CLI_FLAGS_H_

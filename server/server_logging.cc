#include "server/server_logging.h"

#include <grpc/support/log.h>
#include <pthread.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/access_log.h"
#include "server/log_fields.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/base_sink.h"
#include "spdlog/spdlog.h"

namespace deniable::server {
namespace {

// %* : the message's JSON members, "msg" and its key=value fields (log_fields.h).
class JsonMessageMembers : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string members;
    AppendJsonLogMembers(absl::string_view(msg.payload.data(), msg.payload.size()), &members);
    dest.append(members.data(), members.data() + members.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageMembers>();
  }
};

// stdout through stdio's buffer: flushed after each line except the access logger's.
class StdoutSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    std::fwrite(line.data(), 1, line.size(), stdout);
    if (msg.logger_name != kAccessLoggerName) std::fflush(stdout);
  }
  void flush_() override { std::fflush(stdout); }
};

// gRPC's lines are its internals (epoll fds, IPv6 probing): its errors stay errors, its info
// lines are debug and its debug lines trace.
void GrpcLogToSpdlog(gpr_log_func_args* args) {
  const spdlog::level::level_enum level =
      args->severity == GPR_LOG_SEVERITY_ERROR  ? spdlog::level::err
      : args->severity == GPR_LOG_SEVERITY_INFO ? spdlog::level::debug
                                                : spdlog::level::trace;
  spdlog::log(level, "grpc: {}:{} {}", args->file != nullptr ? args->file : "?", args->line,
              args->message != nullptr ? args->message : "");
}

}  // namespace

absl::Status ConfigureLogging(absl::string_view level, absl::string_view format) {
  spdlog::level::level_enum parsed;
  if (level == "trace") {
    parsed = spdlog::level::trace;
  } else if (level == "debug") {
    parsed = spdlog::level::debug;
  } else if (level == "info") {
    parsed = spdlog::level::info;
  } else if (level == "warning") {
    parsed = spdlog::level::warn;
  } else if (level == "error") {
    parsed = spdlog::level::err;
  } else if (level == "off") {
    parsed = spdlog::level::off;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--log_level must be trace, debug, info, warning, error or off, but is \"", level, "\""));
  }
  if (format != "text" && format != "json") {
    return absl::InvalidArgumentError(
        absl::StrCat("--log_format must be text or json, but is \"", format, "\""));
  }
  auto sink = std::make_shared<StdoutSink>();
  auto main_logger = std::make_shared<spdlog::logger>("", sink);
  spdlog::drop(kAccessLoggerName);
  spdlog::register_logger(std::make_shared<spdlog::logger>(kAccessLoggerName, sink));
  spdlog::set_default_logger(main_logger);
  {
    // The flushing thread takes no signal (threads inherit the mask they are made with): the
    // server waits for SIGTERM in one thread of its own, and a stop signal delivered here would
    // end the process without draining.
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &before);
    spdlog::flush_every(std::chrono::seconds(1));
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
  }
  spdlog::set_level(parsed);
  if (format == "json") {
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    formatter->add_flag<JsonMessageMembers>('*').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l",%*})");
    spdlog::set_formatter(std::move(formatter));
  }
  // gRPC's own lines go through the same sink, mapped as GrpcLogToSpdlog says; gRPC formats
  // only the lines the level shows.
  gpr_set_log_function(GrpcLogToSpdlog);
  gpr_set_log_verbosity(parsed <= spdlog::level::trace   ? GPR_LOG_SEVERITY_DEBUG
                        : parsed <= spdlog::level::debug ? GPR_LOG_SEVERITY_INFO
                                                         : GPR_LOG_SEVERITY_ERROR);
  return absl::OkStatus();
}

}  // namespace deniable::server

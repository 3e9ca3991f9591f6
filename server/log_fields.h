// The JSON form of one log message: the server's messages are written as
// `event=NAME key=value key="quoted value" free text`, and a JSON log line carries each pair as
// a field of its own and only the free text in "msg":
//
//   event=start listen=127.0.0.1:0 port=50051 tls=off INSECURE
//   -> "msg":"INSECURE","event":"start","listen":"127.0.0.1:0","port":50051,"tls":"off"
//
// A key is [a-z_][a-z0-9_]* directly followed by "="; a value runs to the next space, or, when
// it starts with a quote, to the first unescaped quote that ends the message or is followed by
// " key=" (else by a space), so that a reason holding quoted values ("unknown metric \"x\"")
// stays whole. Values that are JSON numbers become numbers, the others strings. Every other word
// is free text; "msg" is the free text, or the event's name when there is none. A key that is
// "time", "level" or "msg", or repeats an earlier key, stays in the free text: a value cannot
// replace a field. Client-chosen text reaches messages only through EchoValue
// (deniable/common/echo.h), which escapes quotes, so it cannot end a quoted value early.
//
// Thread-safe (pure functions).
#ifndef DENIABLE_SERVER_LOG_FIELDS_H_
#define DENIABLE_SERVER_LOG_FIELDS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace deniable::server {

struct LogFields {
  std::string text;  // the free words, single-spaced
  // The pairs in order; a quoted value without its outer quotes, its inside as written.
  std::vector<std::pair<std::string, std::string>> fields;
};

// Splits `message` as above.
LogFields ParseLogFields(absl::string_view message);

// Appends `text` to `out` as the inside of a JSON string (quotes, backslashes and control bytes
// escaped; other bytes as they are).
void AppendJsonEscaped(absl::string_view text, std::string* out);

// Appends the members of `message`'s JSON form to `out`, without braces:
// `"msg":"...","event":"start","port":50051`.
void AppendJsonLogMembers(absl::string_view message, std::string* out);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_LOG_FIELDS_H_

#include "server/log_fields.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"

namespace deniable::server {
namespace {

bool IsKeyStart(char c) { return absl::ascii_islower(c) || c == '_'; }
bool IsKeyChar(char c) { return IsKeyStart(c) || absl::ascii_isdigit(c); }

// The length of a "key=" at the start of `s` (without the "="), or 0.
size_t KeyLength(absl::string_view s) {
  if (s.empty() || !IsKeyStart(s[0])) return 0;
  size_t n = 1;
  while (n < s.size() && IsKeyChar(s[n])) ++n;
  return n < s.size() && s[n] == '=' ? n : 0;
}

bool Escaped(absl::string_view s, size_t quote) {  // preceded by an odd run of backslashes
  size_t backslashes = 0;
  while (quote > backslashes && s[quote - backslashes - 1] == '\\') ++backslashes;
  return backslashes % 2 == 1;
}

// The index of the quote closing a value opened at s[open], or npos.
size_t ClosingQuote(absl::string_view s, size_t open) {
  size_t last_before_space = absl::string_view::npos;
  for (size_t i = open + 1; i < s.size(); ++i) {
    if (s[i] != '"' || Escaped(s, i)) continue;
    if (i + 1 == s.size()) return i;
    if (s[i + 1] != ' ') continue;
    if (KeyLength(absl::StripLeadingAsciiWhitespace(s.substr(i + 1))) > 0) return i;
    if (last_before_space == absl::string_view::npos) last_before_space = i;
  }
  return last_before_space;
}

// A JSON number (RFC 8259): -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool IsJsonNumber(absl::string_view s) {
  size_t i = 0;
  const auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && absl::ascii_isdigit(s[i])) ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < s.size() && s[i] == '.' && (++i, !digits())) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

}  // namespace

LogFields ParseLogFields(absl::string_view message) {
  LogFields out;
  std::vector<absl::string_view> words;
  size_t i = 0;
  while (i < message.size()) {
    if (message[i] == ' ') {
      ++i;
      continue;
    }
    const absl::string_view rest = message.substr(i);
    const size_t key_length = KeyLength(rest);
    size_t end = std::min(message.find(' ', i), message.size());  // the token's end
    if (key_length > 0) {
      const absl::string_view key = rest.substr(0, key_length);
      const size_t value_start = i + key_length + 1;
      absl::string_view value = message.substr(value_start, end - value_start);
      if (value_start < message.size() && message[value_start] == '"') {
        const size_t close = ClosingQuote(message, value_start);
        if (close != absl::string_view::npos) {
          value = message.substr(value_start + 1, close - value_start - 1);
          end = close + 1;
        }
      }
      const bool taken = key == "time" || key == "level" || key == "msg" ||
                         std::any_of(out.fields.begin(), out.fields.end(),
                                     [key](const auto& f) { return f.first == key; });
      if (!taken) {
        out.fields.emplace_back(std::string(key), std::string(value));
        i = end;
        continue;
      }
    }
    words.push_back(message.substr(i, end - i));
    i = end;
  }
  out.text = absl::StrJoin(words, " ");
  return out;
}

void AppendJsonEscaped(absl::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (const char c : text) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out->append({'\\', 'u', '0', '0', kHex[(c >> 4) & 0xf], kHex[c & 0xf]});
        } else {
          out->push_back(c);
        }
    }
  }
}

void AppendJsonLogMembers(absl::string_view message, std::string* out) {
  const LogFields parsed = ParseLogFields(message);
  absl::string_view msg = parsed.text;
  for (const auto& [key, value] : parsed.fields) {
    if (msg.empty() && key == "event") msg = value;
  }
  out->append("\"msg\":\"");
  AppendJsonEscaped(msg, out);
  out->push_back('"');
  for (const auto& [key, value] : parsed.fields) {
    out->append(",\"");
    out->append(key);  // [a-z_][a-z0-9_]*: nothing to escape
    out->append("\":");
    if (IsJsonNumber(value)) {
      out->append(value);
    } else {
      out->push_back('"');
      AppendJsonEscaped(value, out);
      out->push_back('"');
    }
  }
}

}  // namespace deniable::server

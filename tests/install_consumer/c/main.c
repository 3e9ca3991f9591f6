/* A C program outside the Deniable tree that uses the installed C API (libdeniable_c), built
 * both with CMake (find_package(deniable-c), deniable::c) and with pkg-config (deniable-c.pc).
 * Opens a reporter on a device file against a port where nothing listens: the report cannot
 * fetch its design, so nothing is queued and the error names a status. Prints "ok" and exits 0
 * when every check holds. */
#include <stdio.h>
#include <string.h>

#include "deniable/client/deniable_c.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  deniable_reporter_options options;
  deniable_reporter_options_init(&options);
  options.target = "127.0.0.1:1";
  options.insecure = 1;
  options.store_path = argv[1];
  options.first_design_wait_ms = 200;
  options.background_sending = 0;
  deniable_reporter* reporter = NULL;
  deniable_error error;
  memset(&error, 0, sizeof(error));
  if (deniable_reporter_open(&options, &reporter, &error) != DENIABLE_OK) {
    fprintf(stderr, "open: %s: %s\n", deniable_status_name(error.code), error.message);
    return 1;
  }
  const int code = deniable_reporter_report(reporter, "m", 1, NULL, NULL, &error);
  const int64_t pending = deniable_reporter_pending(reporter);
  deniable_reporter_close(reporter);
  if (code == DENIABLE_OK || pending != 0) {
    fprintf(stderr, "unexpected: code %d, %lld pending\n", code, (long long)pending);
    return 1;
  }
  printf("ok: %s\n", deniable_status_name(code));
  return 0;
}

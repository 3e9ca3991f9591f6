/* Imports the C API as the module map says (module DeniableC, as Swift's `import DeniableC`
 * does) and calls it through the imported declarations: built with clang -fmodules and linked
 * against libdeniable_c by CTest swift_module_map (tests/swift_module_map_test.py). */
#pragma clang module import DeniableC
#include <stdio.h>
#include <string.h>

int main(void) {
  deniable_reporter_options o;
  deniable_reporter_options_init(&o); /* no target: open must refuse it, naming the field */
  deniable_error e;
  deniable_reporter* r = NULL;
  int code = deniable_reporter_open(&o, &r, &e);
  printf("%s: %s\n", deniable_status_name(code), e.message);
  if (code != DENIABLE_INVALID_ARGUMENT || strstr(e.message, "target") == NULL || r != NULL) {
    return 1;
  }
  /* The function the Swift Reporter's report() calls, with its NULL reporter check. */
  size_t size = 99;
  code = deniable_reporter_report_labeled(NULL, "m", 1, NULL, NULL, 0, NULL, &size, &e);
  if (code != DENIABLE_INVALID_ARGUMENT || size != 0) return 1;
  /* The functions reportCategoryIndex(), reportValue() and reportString() call, likewise. */
  size = 99;
  code = deniable_reporter_report_category_index_labeled(NULL, "m", 0, NULL, 0, NULL, &size, &e);
  if (code != DENIABLE_INVALID_ARGUMENT || size != 0) return 1;
  size = 99;
  code = deniable_reporter_report_value_labeled(NULL, "m", 1.0, NULL, 0, NULL, &size, &e);
  if (code != DENIABLE_INVALID_ARGUMENT || size != 0) return 1;
  size = 99;
  const uint8_t value[] = {'o', 'o', 'm'};
  code = deniable_reporter_report_string_labeled(NULL, "m", value, sizeof(value), NULL, 0, NULL,
                                                 &size, &e);
  return code == DENIABLE_INVALID_ARGUMENT && size == 0 ? 0 : 1;
}

/* The one header of the DeniableC module (module.modulemap): the C API, found on the include
 * path that pkg-config's deniable-c gives (or -I client/include in this repository). */
#ifndef DENIABLE_SWIFT_SHIM_H_
#define DENIABLE_SWIFT_SHIM_H_
#include <deniable/client/deniable_c.h>
#endif /* DENIABLE_SWIFT_SHIM_H_ */

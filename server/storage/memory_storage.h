// Forwards to server/storage/memory/memory_storage.h, where MemoryStorage lives now
// (docs/storage.md, "Layout"). Kept only for the tests of server/core, whose include lines move
// with that folder's next change; new code includes "server/storage/memory/memory_storage.h".
// Remove this file once
//   git grep -l '"server/storage/memory_storage.h"'
// lists nothing.
#ifndef DENIABLE_SERVER_STORAGE_MEMORY_STORAGE_H_
#define DENIABLE_SERVER_STORAGE_MEMORY_STORAGE_H_

#include "server/storage/memory/memory_storage.h"  // IWYU pragma: export

#endif  // DENIABLE_SERVER_STORAGE_MEMORY_STORAGE_H_

// Node entry point: everything of index.js plus FileStore.
export * from './index.js';
export { FileStore } from './file_store.js';

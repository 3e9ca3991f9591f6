export * from './index.js';
import type { DeviceStore } from './index.js';

/** Node: the state in one JSON file (mode 0600), replaced atomically on each change (written,
 * fsynced, renamed). One process per file. sync: false skips the fsyncs (faster; survives a
 * crash of the process but not power loss). */
export declare class FileStore implements DeviceStore {
  constructor(options: { path: string; sync?: boolean });
  read<T>(fn: (state: any) => T): Promise<T>;
  mutate<T>(fn: (state: any) => T): Promise<T>;
  close(): Promise<void>;
}

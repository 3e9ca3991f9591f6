// FileStore (Node): the device state in one JSON file, replaced atomically on every change
// (written to FILE.tmp, fsynced, renamed over FILE, directory fsynced), so a crash or power
// loss leaves either the old or the new state, never a torn one. Created with mode 0600 (the
// memo table is sensitive, see stores.js). One process per file.
import { open, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';

import { emptyState } from './stores.js';

export class FileStore {
  /** @param {{path: string, sync?: boolean}} options sync (default true): fsync each change. */
  constructor({ path, sync = true } = {}) {
    if (typeof path !== 'string' || path === '') {
      throw new Error('INVALID_ARGUMENT: path: must be a file path');
    }
    this.path = path;
    this.sync = sync;
    this.state = null;
    this.chain = Promise.resolve();
  }

  async #load() {
    if (this.state) return this.state;
    let text = null;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (e) {
      if (e.code !== 'ENOENT') throw new Error(`UNAVAILABLE: ${this.path}: ${e.message}`);
    }
    if (text === null) {
      this.state = emptyState();
      await this.#write(this.state);
    } else {
      let parsed;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
      if (!parsed || parsed.format !== 'deniable-js-1') {
        throw new Error(`DATA_LOSS: ${this.path} is not a Deniable device store`);
      }
      this.state = parsed;
    }
    return this.state;
  }

  async #write(state) {
    const tmp = `${this.path}.tmp`;
    const file = await open(tmp, 'w', 0o600);
    try {
      await file.writeFile(JSON.stringify(state));
      if (this.sync) await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, this.path);
    if (this.sync) {
      const dir = await open(dirname(this.path), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    }
  }

  #serialized(task) {
    const run = this.chain.then(task, task);
    this.chain = run.catch(() => {});
    return run;
  }

  read(fn) {
    return this.#serialized(async () => fn(await this.#load()));
  }

  /** fn changes a copy; the copy is written, then becomes the state (all or nothing). */
  mutate(fn) {
    return this.#serialized(async () => {
      const copy = structuredClone(await this.#load());
      const result = fn(copy);
      await this.#write(copy);
      this.state = copy;
      return result;
    });
  }

  async close() {
    await this.chain;
  }
}

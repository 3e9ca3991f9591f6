// Device stores: where the Reporter keeps its state between calls and across restarts.
//
// The state is one document (memo table, queue, ledger, counters, designs; see emptyState) and
// every change is one atomic read-modify-write of it (mutate): a report is either committed with
// its memo entry and ledger line, or not at all. With one report per metric per period the
// queue stays small, so rewriting the document is cheap (figures in docs/sdk.md).
//
// The memo table maps (metric, design version, true value) to the randomized bit, and
// categoryMemo (metric, design version, true category index) to the randomized categorical
// report, numericMemo (metric, design version, level) to a numeric metric's randomized answer
// (numericAlpha keeps the device's alpha per metric), hhMemo a heavy-hitters metric's randomized
// answer per (metric, design version, HMAC of the value under hhMemoKey: never the value itself;
// hhGroup keeps the device's group): whoever reads the store learns which true values this
// device reported (a heavy-hitters value by guessing it and checking the HMAC). Keep it in the
// app's private storage. The queue never holds a true answer.

/** A fresh, empty state document. */
export function emptyState() {
  return {
    format: 'deniable-js-1',
    nextSequence: 1,
    queue: [],      // [{sequence, metric, report}] oldest first; report in the JSON mapping
    memo: {},       // "metric\u0000version\u0000value" -> bit
    categoryMemo: {}, // "metric\u0000version\u0000category index" -> CategoricalReport (JSON)
    numericMemo: {},  // "metric\u0000version\u0000level" -> {bit} or {bit: 0, numeric: {buckets, bits}}
    numericAlpha: {}, // metric -> this device's alpha of alpha-point rounding, in [0, 1)
    hhGroup: {},    // "metric\u0000version" -> this device's heavy-hitters group, drawn once
    hhMemo: {},     // "metric\u0000version\u0000hex HMAC-SHA256(hhMemoKey, value)" -> {bit, heavyHitters}
    hhMemoKey: null, // 32 random bytes (hex), drawn at the first reportString: the memo's key
    ledger: {},     // metric -> MetricLedger
    counters: {
      acknowledged: 0, duplicates: 0, dropped_rejected: 0, dropped_queue_full: 0,
      dropped_too_old: 0, dropped_design_mismatch: 0, values_clipped: 0,
    },
    designs: {},    // metric -> GetDesignResponse (JSON mapping)
  };
}

function checkState(state, where) {
  if (state === undefined || state === null) return emptyState();
  if (typeof state !== 'object' || state.format !== 'deniable-js-1') {
    throw new Error(`DATA_LOSS: ${where} is not a Deniable device store`);
  }
  return state;
}

/** Volatile: for tests and simulations. */
export class MemoryStore {
  #state = emptyState();

  async read(fn) {
    return fn(this.#state);
  }

  /** Runs fn on the state in place (no copy: simulations make many reports). The Reporter's
   * functions check everything before they change anything, so a throw changes nothing. */
  async mutate(fn) {
    return fn(this.#state);
  }

  async close() {}
}

/**
 * IndexedDB (browsers): the state document in one object store; each mutate() is one
 * readwrite transaction, so it is atomic and also serialized between tabs of the same origin.
 * The queue survives reloads and browser restarts (durability "strict" where supported).
 */
export class IndexedDbStore {
  /** @param {{name?: string, indexedDB?: IDBFactory}} options name: the database name. */
  constructor({ name = 'deniable', indexedDB } = {}) {
    this.name = name;
    this.idb = indexedDB ?? globalThis.indexedDB;
    if (!this.idb) throw new Error('FAILED_PRECONDITION: indexedDB is not available');
    this.db = null;
  }

  #open() {
    if (this.db) return Promise.resolve(this.db);
    return new Promise((resolve, reject) => {
      const request = this.idb.open(this.name, 1);
      request.onupgradeneeded = () => request.result.createObjectStore('state');
      request.onsuccess = () => {
        this.db = request.result;
        resolve(this.db);
      };
      request.onerror = () => reject(new Error(`UNAVAILABLE: indexedDB ${this.name}: ${request.error}`));
    });
  }

  async #transaction(mode, fn) {
    const db = await this.#open();
    return new Promise((resolve, reject) => {
      let tx;
      try {
        tx = db.transaction('state', mode, { durability: 'strict' });
      } catch {
        tx = db.transaction('state', mode);
      }
      const objects = tx.objectStore('state');
      let result;
      const get = objects.get('state');
      get.onsuccess = () => {
        try {
          const state = checkState(get.result, `indexedDB ${this.name}`);
          result = fn(state);
          if (mode === 'readwrite') objects.put(state, 'state');
        } catch (e) {
          tx.abort();
          reject(e);
        }
      };
      tx.oncomplete = () => resolve(result);
      tx.onerror = () => reject(new Error(`UNAVAILABLE: indexedDB ${this.name}: ${tx.error}`));
      tx.onabort = () => reject(new Error(`UNAVAILABLE: indexedDB ${this.name}: aborted`));
    });
  }

  read(fn) {
    return this.#transaction('readonly', fn);
  }

  mutate(fn) {
    return this.#transaction('readwrite', fn);
  }

  async close() {
    if (this.db) this.db.close();
    this.db = null;
  }
}

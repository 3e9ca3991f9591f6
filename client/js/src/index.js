// The Deniable SDK for browsers and Node (docs/sdk.md "JavaScript"). Node's FileStore is in
// "deniable-sdk/node" so that this entry point loads in browsers without node: modules.
export { Reporter, epsilonOf, parseDesign } from './reporter.js';
export { HttpTransport } from './http_transport.js';
export { QueryClient, changeWords } from './query_client.js';
export { MemoryStore, IndexedDbStore, emptyState } from './stores.js';
export { DeniableError, StatusCode, codeName, isPermanentBatchError } from './errors.js';
export { secureRandom, seededRandom } from './random.js';
export {
  categoricalDesignFromWire, randomizeCategory, drawsFrom, randomBelow, supports, supportChannel,
  localHash, LOCAL_HASH_PRIME,
} from './categorical.js';
export {
  makeNumericDesign, numericDesignFromWire, clipValue, levelOf, randomizeNumeric, numericChannel,
  numericLocalEpsilon,
} from './numeric.js';
export {
  makeHeavyHittersDesign, heavyHittersDesignFromWire, valueBytes, validateHeavyHitterValue,
  prefixOf, sketchHash, hadamardPlus, drawGroup, randomizeHeavyHitter,
} from './heavy_hitters.js';

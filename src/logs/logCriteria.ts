// Which logs a filter wants (spec 2.10): an address set and an order-dependent topic filter, and
// the 2048-bit logs bloom test that lets a query skip a block or a receipt that cannot hold a match.
// Pure functions; the bloom probes of a criteria are computed once, not per block.
import { keccak256 } from "../common/crypto.js";
import type { ChainLog } from "../chain/receipts.js";

export interface LogCriteria {
  /** Any of these addresses; empty: any address. */
  readonly addresses: readonly Uint8Array[];
  /**
   * Per position, the topics allowed there (any of them); null or an empty list allows any topic
   * there. As in geth and the reference node, a log with fewer topics than there are positions
   * does not match (so [null, null] needs two topics); topics past the last position are free.
   */
  readonly topics: readonly (readonly Uint8Array[] | null)[];
}

/** The three bits a value sets in a logs bloom: byte offsets and masks. */
export interface BloomProbe {
  readonly bytes: readonly [number, number, number];
  readonly masks: readonly [number, number, number];
}

const bloomBytes = 256;

/** Where a value (an address or a topic) lands in a logs bloom: keccak-256, three 11-bit indexes. */
export function bloomProbe(value: Uint8Array): BloomProbe {
  const hash = keccak256(value);
  const bytes: number[] = [];
  const masks: number[] = [];
  for (let pair = 0; pair < 3; pair++) {
    const bit = ((hash[2 * pair]! << 8) | hash[2 * pair + 1]!) & 2047;
    bytes.push(bloomBytes - 1 - (bit >> 3));
    masks.push(1 << (bit & 7));
  }
  return { bytes: bytes as [number, number, number], masks: masks as [number, number, number] };
}

/** Whether the bloom has the value's three bits: false means the value is certainly absent. */
export function bloomMayContain(bloom: Uint8Array, probe: BloomProbe): boolean {
  const { bytes, masks } = probe;
  return (bloom[bytes[0]]! & masks[0]) !== 0 && (bloom[bytes[1]]! & masks[1]) !== 0 && (bloom[bytes[2]]! & masks[2]) !== 0;
}

function equalBytes(left: Uint8Array, right: Uint8Array): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index++) if (left[index] !== right[index]) return false;
  return true;
}

function includesBytes(list: readonly Uint8Array[], value: Uint8Array): boolean {
  for (const entry of list) if (equalBytes(entry, value)) return true;
  return false;
}

/** A position of the topic filter that constrains: allowed values and their index. */
interface TopicConstraint {
  readonly position: number;
  readonly allowed: readonly Uint8Array[];
}

/** Criteria ready to test many blooms and logs. */
export class LogMatcher {
  private readonly topicConstraints: readonly TopicConstraint[];
  /** Every group must have a probe the bloom contains (AND of ORs): addresses, then each constrained topic. */
  private readonly bloomGroups: readonly (readonly BloomProbe[])[];

  constructor(readonly criteria: LogCriteria) {
    this.topicConstraints = criteria.topics.flatMap((allowed, position) => (allowed === null || allowed.length === 0 ? [] : [{ position, allowed }]));
    const groups: (readonly Uint8Array[])[] = [];
    if (criteria.addresses.length > 0) groups.push(criteria.addresses);
    for (const constraint of this.topicConstraints) groups.push(constraint.allowed);
    this.bloomGroups = groups.map((values) => values.map(bloomProbe));
  }

  /** false when the bloom proves no log behind it matches (a block header's or a receipt's). */
  bloomMayMatch(bloom: Uint8Array): boolean {
    for (const group of this.bloomGroups) {
      let found = false;
      for (const probe of group) {
        if (bloomMayContain(bloom, probe)) {
          found = true;
          break;
        }
      }
      if (!found) return false;
    }
    return true;
  }

  /** The exact test (spec 2.10 table). */
  matches(log: ChainLog): boolean {
    if (this.criteria.addresses.length > 0 && !includesBytes(this.criteria.addresses, log.address)) return false;
    if (log.topics.length < this.criteria.topics.length) return false;
    for (const { position, allowed } of this.topicConstraints) {
      const topic = log.topics[position];
      if (topic === undefined || !includesBytes(allowed, topic)) return false;
    }
    return true;
  }
}

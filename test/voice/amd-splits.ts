import { buildAmdSet, type AmdItemSpec, type AmdSample } from './amd-corpus.js';
import { amdFreshSpec } from './amd-fresh-set.js';
import { amdHeldOutSpec } from './amd-heldout-set.js';
import { amdTuningSpec } from './amd-tuning-set.js';

/** The splits of the answering-machine set: thresholds are chosen on `tuning` only; `fresh` was written after `heldout` had been looked at. */
export type AmdSplit = 'tuning' | 'heldout' | 'fresh';

export const amdSplitSpecs: Readonly<Record<AmdSplit, readonly AmdItemSpec[]>> = { tuning: amdTuningSpec, heldout: amdHeldOutSpec, fresh: amdFreshSpec };

/** One split's items, built on first use (flite, espeak-ng, Festival, sox) and cached. */
export function amdSplit(split: AmdSplit): Promise<AmdSample[]> {
  return buildAmdSet(amdSplitSpecs[split]);
}

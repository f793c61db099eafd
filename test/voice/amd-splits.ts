import { buildAmdSet, type AmdItemSpec, type AmdSample } from './amd-corpus.js';
import { amdHeldOutSpec } from './amd-heldout-set.js';
import { amdTuningSpec } from './amd-tuning-set.js';

/** The two splits of the answering-machine set: thresholds are chosen on `tuning` only. */
export type AmdSplit = 'tuning' | 'heldout';

export const amdSplitSpecs: Readonly<Record<AmdSplit, readonly AmdItemSpec[]>> = { tuning: amdTuningSpec, heldout: amdHeldOutSpec };

/** One split's items, built on first use (flite, espeak-ng, Festival, sox) and cached. */
export function amdSplit(split: AmdSplit): Promise<AmdSample[]> {
  return buildAmdSet(amdSplitSpecs[split]);
}

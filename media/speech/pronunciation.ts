import { invalidArgument } from '../../core/errors.js';

/** Spec limit: custom pronunciation words per agent. */
export const MAX_PRONUNCIATION_WORDS = 40;

export interface PronunciationRule {
  readonly word: string;
  readonly pronunciation: string;
  readonly caseSensitive: boolean;
  /** Speech profile names the rule applies to; empty = all. */
  readonly speechProfiles: readonly string[];
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Replaces whole words (Unicode-aware boundaries, so Devanagari and Arabic words work) with
 * their respelling before synthesis. Longer words win over their prefixes ("AI Labs" before "AI").
 */
export class PronunciationLexicon {
  private readonly rules: readonly { readonly re: RegExp; readonly to: string; readonly profiles: readonly string[] }[];

  constructor(rules: readonly PronunciationRule[]) {
    if (rules.length > MAX_PRONUNCIATION_WORDS) {
      throw invalidArgument(`at most ${MAX_PRONUNCIATION_WORDS} pronunciation words per agent, got ${rules.length}`, [
        { path: 'pronunciationWords', message: `must have at most ${MAX_PRONUNCIATION_WORDS} entries` },
      ]);
    }
    this.rules = [...rules]
      .sort((a, b) => b.word.length - a.word.length)
      .map((r) => ({
        re: new RegExp(`(?<![\\p{L}\\p{N}\\p{M}])${escapeRegExp(r.word)}(?![\\p{L}\\p{N}\\p{M}])`, r.caseSensitive ? 'gu' : 'giu'),
        to: r.pronunciation,
        profiles: r.speechProfiles,
      }));
  }

  apply(text: string, speechProfile?: string): string {
    let out = text;
    for (const rule of this.rules) {
      if (rule.profiles.length > 0 && (!speechProfile || !rule.profiles.includes(speechProfile))) continue;
      out = out.replace(rule.re, () => rule.to);
    }
    return out;
  }
}

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/** axe-core from npm, read once; evaluated through the DevTools protocol, which the page's CSP does not govern. */
let source: string | undefined;
const axeSource = (): string => (source ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8'));

interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: ReadonlyArray<{ readonly target: readonly unknown[] }>;
}

/**
 * Runs axe-core (WCAG 2.0/2.1 A and AA rules and best practices) on the page as it is now and
 * fails on any serious or critical violation, naming the rule and the elements.
 */
export async function assertAccessible(page: Page, where: string): Promise<void> {
  if ((await page.evaluate('typeof window.axe')) === 'undefined') await page.evaluate(axeSource());
  const violations = (await page.evaluate(`(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  })()`)) as AxeViolation[];
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    serious.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 5).join(', ')})`),
    [],
    `accessibility violations on ${where}`,
  );
}

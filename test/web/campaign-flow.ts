import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { recordInsightsTool } from '../../control-api/features/insights/llm-insight-extractor.js';
import { twirpRequest } from '../campaigns/twirp-client.js';
import type { FakeChatCompletionsServer } from '../fakes/fake-chat-completions.js';
import type { DashboardHarness } from './dashboard-harness.js';

/**
 * A tenant model whose insight extraction waits until the test lets it answer: the call stays
 * "Analyzing" long enough to be seen, then the insights land (the fake speaks the real
 * chat-completions protocol on loopback; the worker reaches it through the tenant's settings.llm).
 */
export class GatedInsights {
  private release: (() => void) | undefined;
  private readonly gate = new Promise<void>((resolve) => (this.release = resolve));

  constructor(llm: FakeChatCompletionsServer, values: Record<string, unknown>) {
    llm.setBrain(async () => {
      await this.gate;
      return { toolCalls: [{ name: recordInsightsTool, arguments: values }] };
    });
  }

  open(): void {
    this.release?.();
  }
}

/** SendMessage as a client would send it: the tenant in the Host, the campaign token from the dashboard. */
export async function sendMessage(h: DashboardHarness, token: string, campaignId: string): Promise<string> {
  const port = Number(new URL(h.platform.controlUrl).port);
  // A time in the past means "now" (docs/api.md): no wall clock in the test.
  const body = { CampaignID: campaignId, To: { PhoneNumber: '919812345678' }, Variables: { name: 'Asha' }, ScheduledAt: { Time: '2026-01-01T00:00:00Z' } };
  const sent = await twirpRequest(port, { token, body });
  assert.equal(sent.status, 200, JSON.stringify(sent.body));
  return String(sent.body['message_id']);
}

/** Fills a labelled form field on the page (the label is the one a person reads). */
export const fill = async (page: Page, label: string, value: string): Promise<void> => page.getByLabel(label, { exact: true }).fill(value);

/** A link of the main navigation (page content may link to the same place). */
export const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

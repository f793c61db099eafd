import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium, type LaunchedChromium } from '../helpers/chromium.js';
import { startOperationsPlatform, type RunningPlatform } from '../system/operations-helpers.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** The real platform process (control, gateway, worker on PGlite), headless Chromium, and the API. */
export interface DashboardHarness {
  readonly platform: RunningPlatform;
  readonly chromium: LaunchedChromium;
  readonly dataDir: string;
  /** Where the page screenshots go (kept after the run; the test prints it). */
  readonly screenshots: string;
  /** A JSON request to the management API with the operator token (set-up the UI is not under test for). */
  api<T = Record<string, unknown>>(method: string, url: string, body?: unknown, token?: string): Promise<{ status: number; body: T }>;
  shot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

export async function startDashboardHarness(options: { env?: Record<string, string>; fakeAudioWav?: string } = {}): Promise<DashboardHarness> {
  if (!existsSync(path.join(repoRoot, 'dist', 'dashboard', 'index.html'))) {
    throw new Error('dist/dashboard is not built: run npm run build (npm test does it first)');
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vap-dashboard-'));
  const screenshots = process.env['DASHBOARD_SCREENSHOTS'] ?? path.join(tmpdir(), `vap-dashboard-screenshots-${process.pid}`);
  mkdirSync(screenshots, { recursive: true });
  const platform = await startOperationsPlatform(dataDir, options.env);
  let chromium: LaunchedChromium;
  try {
    chromium = await launchChromium(options.fakeAudioWav ? { fakeAudioWav: options.fakeAudioWav } : {});
  } catch (error) {
    platform.process.child.kill('SIGKILL');
    throw error;
  }
  return {
    platform,
    chromium,
    dataDir,
    screenshots,
    api: async <T>(method: string, url: string, body?: unknown, token?: string) => {
      const response = await fetch(`${platform.controlUrl}${url}`, {
        method,
        headers: { Authorization: `Bearer ${token ?? platform.operatorToken}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, body: (text ? JSON.parse(text) : {}) as T };
    },
    shot: async (page: Page, name: string) => {
      const file = path.join(screenshots, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },
    close: async () => {
      await chromium.close();
      platform.process.child.kill('SIGTERM');
      await new Promise<void>((resolve) => {
        if (platform.process.child.exitCode !== null) return resolve();
        const killer = setTimeout(() => platform.process.child.kill('SIGKILL'), 15_000);
        platform.process.child.once('exit', () => {
          clearTimeout(killer);
          resolve();
        });
      });
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Signs in through the sign-in page with `token` and waits for the tenant's first page. */
export async function signIn(page: Page, baseUrl: string, token: string): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
  assert.match(page.url(), /\/t\/[^/]+\/recipes$/);
}

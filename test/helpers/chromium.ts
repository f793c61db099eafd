import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (test/setup/system-packages.txt): playwright-core drives it, nothing is downloaded. */
export const chromiumPath = '/usr/bin/chromium';

export interface LaunchedChromium {
  readonly browser: Browser;
  close(): Promise<void>;
}

/**
 * Headless Chromium with a fresh profile. `fakeAudioWav` makes getUserMedia return that WAV as the
 * microphone (the permission prompt is answered yes), which is how a web call speaks in a test;
 * `webrtcOnLoopback` lets WebRTC use 127.0.0.1 (only inside a network namespace with only `lo`).
 */
export async function launchChromium(options: { fakeAudioWav?: string; webrtcOnLoopback?: boolean } = {}): Promise<LaunchedChromium> {
  if (!existsSync(chromiumPath)) throw new Error(`${chromiumPath} is missing: install Debian's chromium (npm test's pretest step does)`);
  const args = [
    '--no-sandbox', // as root (CI) Chromium refuses to start with its sandbox
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
  if (options.webrtcOnLoopback) {
    // ICE on loopback (Chromium leaves `lo` out of its candidates by default), and the gateway's
    // self-signed WSS certificate taken as it is: the test runs where only `lo` exists.
    args.push('--allow-loopback-in-peer-connection', '--ignore-certificate-errors');
  }
  if (options.fakeAudioWav) {
    args.push('--autoplay-policy=no-user-gesture-required', '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${options.fakeAudioWav}`);
  }
  // playwright-core gives every launch a fresh temporary profile (--user-data-dir) and removes it.
  const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args, timeout: 60_000 });
  return {
    browser,
    close: async () => {
      await browser.close().catch(() => undefined);
    },
  };
}

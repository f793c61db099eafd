/**
 * Provider A's call instructions (its XML markup language, from the public TwiML reference):
 * the documents the platform answers webhooks with or hands the REST API. Only what we use:
 * `<Connect action><Stream url><Parameter/></Stream></Connect>` (a bidirectional media stream;
 * when it ends the provider requests `action` to learn what to do next), `<Dial>` for transfers,
 * `<Reject>` and `<Hangup>`.
 */

const escapeXml = (value: string): string =>
  value.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] as string);

const doc = (body: string): string => `<?xml version="1.0" encoding="UTF-8"?><Response>${body}</Response>`;

export interface ConnectStream {
  /** wss:// (ws:// on loopback in tests) URL of our media stream endpoint; the provider allows no query string. */
  readonly streamUrl: string;
  /** Requested when the stream ends while the call is still up (our chance to reconnect it). */
  readonly actionUrl: string;
  /** Echoed in the stream's `start` frame as customParameters. */
  readonly parameters?: Readonly<Record<string, string>>;
}

/** Bidirectional stream of the call to us (`<Connect><Stream>`; `<Start><Stream>` would be one-way). */
export function connectStreamTwiml(c: ConnectStream): string {
  const params = Object.entries(c.parameters ?? {})
    .map(([name, value]) => `<Parameter name="${escapeXml(name)}" value="${escapeXml(value)}"/>`)
    .join('');
  return doc(`<Connect action="${escapeXml(c.actionUrl)}" method="POST"><Stream url="${escapeXml(c.streamUrl)}">${params}</Stream></Connect>`);
}

export interface DialTarget {
  /** E.164 number, or a sip:/sips: URI. */
  readonly target: string;
  /** Caller ID presented to the target (our number). */
  readonly callerId: string;
  /** Requested when the dialled leg ends or fails (DialCallStatus). */
  readonly actionUrl: string;
  /** Requested when the target answers (the noun's statusCallback, event `answered`). */
  readonly answeredUrl: string;
  /** Ring the target this long (seconds) before giving up with no-answer. */
  readonly timeoutSeconds: number;
}

/** The caller is bridged to the target by the provider (the Transfer block); our stream leaves the call. */
export function dialTwiml(d: DialTarget): string {
  const status = `statusCallbackEvent="answered" statusCallback="${escapeXml(d.answeredUrl)}" statusCallbackMethod="POST"`;
  const noun = /^sips?:/i.test(d.target) ? `<Sip ${status}>${escapeXml(d.target)}</Sip>` : `<Number ${status}>${escapeXml(d.target)}</Number>`;
  return doc(`<Dial action="${escapeXml(d.actionUrl)}" method="POST" timeout="${d.timeoutSeconds}" callerId="${escapeXml(d.callerId)}">${noun}</Dial>`);
}

/** Refuses a call without answering it (`busy` or `rejected`). */
export const rejectTwiml = (reason: 'busy' | 'rejected'): string => doc(`<Reject reason="${reason}"/>`);

export const hangupTwiml = (): string => doc('<Hangup/>');

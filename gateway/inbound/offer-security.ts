/**
 * What an SDP offer asks of media security, read from its first audio stream (the one the media
 * port would take). Line-level on purpose: gateway/ does not parse SDP (media/ does), it only needs
 * the stream's protocol (RFC 8866 sec. 5.14) and whether it carries SDES keys (RFC 4568 sec. 9.1).
 */
export type OfferSecurity =
  /** RTP/AVP without keys. */
  | { readonly kind: 'plain' }
  /** SDES: RTP/SAVP with a=crypto, or RTP/AVP with a=crypto (RFC 8643 opportunistic SRTP). */
  | { readonly kind: 'sdes'; readonly protocol: string; readonly suites: readonly string[]; readonly opportunistic: boolean }
  /** Anything else for audio (RTP/SAVP without keys, DTLS-SRTP, AVPF): not ours to relay. */
  | { readonly kind: 'other'; readonly protocol: string };

/** Suites rtpengine can terminate (RFC 4568 sec. 6.2, RFC 6188, RFC 7714). */
export const relayableSuites: ReadonlySet<string> = new Set([
  'AES_CM_128_HMAC_SHA1_80',
  'AES_CM_128_HMAC_SHA1_32',
  'AES_192_CM_HMAC_SHA1_80',
  'AES_192_CM_HMAC_SHA1_32',
  'AES_256_CM_HMAC_SHA1_80',
  'AES_256_CM_HMAC_SHA1_32',
  'AEAD_AES_128_GCM',
  'AEAD_AES_256_GCM',
]);

/** Each audio stream with a port, in order (an offer may carry RTP/SAVP and an RTP/AVP fallback). */
export function offerSecurity(sdp: string): OfferSecurity[] {
  const streams: OfferSecurity[] = [];
  const lines = sdp.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const m = /^m=audio\s+(\d+)(?:\/\d+)?\s+(\S+)/.exec(lines[i] ?? '');
    if (!m || Number(m[1]) === 0) continue;
    const protocol = (m[2] ?? '').toUpperCase();
    const suites: string[] = [];
    for (let j = i + 1; j < lines.length && !(lines[j] ?? '').startsWith('m='); j++) {
      // a=crypto:<tag> <crypto-suite> <key-params> (RFC 4568 sec. 9.1)
      const c = /^a=crypto:\d{1,9}\s+(\S+)\s+\S/.exec((lines[j] ?? '').trim());
      if (c) suites.push((c[1] ?? '').toUpperCase());
    }
    if (protocol === 'RTP/AVP') streams.push(suites.length === 0 ? { kind: 'plain' } : { kind: 'sdes', protocol, suites, opportunistic: true });
    else if (protocol === 'RTP/SAVP' && suites.length > 0) streams.push({ kind: 'sdes', protocol, suites, opportunistic: false });
    else streams.push({ kind: 'other', protocol });
  }
  return streams;
}

import { serializedName } from './headers.js';
import { isRequest, type SipMessage, type SipResponse } from './message.js';
import { SIP_VERSION } from './parser.js';

/**
 * Writes a message for the wire (RFC 3261 sec. 7): canonical header names, folding already
 * removed, and a Content-Length computed from the body octets, never copied from the input
 * (RFC 3261 sec. 18.3 and 20.14 make it mandatory on streams, so it is always written).
 */
export function serializeHead(msg: SipMessage): string {
  let out = isRequest(msg)
    ? `${msg.method} ${msg.uri} ${SIP_VERSION}\r\n`
    : `${SIP_VERSION} ${(msg as SipResponse).status} ${(msg as SipResponse).reason}\r\n`;
  const h = msg.headers;
  for (let i = 0; i < h.size; i++) {
    const key = h.keyAt(i);
    if (key === 'content-length') continue;
    out += `${serializedName(key, h.nameAt(i))}: ${h.valueAt(i)}\r\n`;
  }
  return `${out}Content-Length: ${msg.body.length}\r\n\r\n`;
}

export function serialize(msg: SipMessage): Buffer {
  const head = serializeHead(msg);
  if (msg.body.length === 0) return Buffer.from(head, 'utf8');
  const headLength = Buffer.byteLength(head, 'utf8');
  const out = Buffer.allocUnsafe(headLength + msg.body.length);
  out.write(head, 0, 'utf8');
  msg.body.copy(out, headLength);
  return out;
}

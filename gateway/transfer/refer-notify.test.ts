import assert from 'node:assert/strict';
import type { SipRequest } from '../sip/message/message.js';
import { parseDatagram } from '../sip/message/parser.js';
import { readReferNotify } from './refer-notify.js';

/** A NOTIFY as a transferee sends it in the dialog (RFC 3515 sec. 2.4.4). */
function notify(headers: string[], body = '', type = 'message/sipfrag;version=2.0'): SipRequest {
  const lines = [
    'NOTIFY sip:gateway@127.0.0.1:5060 SIP/2.0',
    'Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK-n1',
    'From: <sip:caller@127.0.0.1>;tag=c',
    'To: <sip:+914440000001@127.0.0.1>;tag=g',
    'Call-ID: notify-test@127.0.0.1',
    'CSeq: 2 NOTIFY',
    'Max-Forwards: 70',
    ...headers,
    ...(body ? [`Content-Type: ${type}`] : []),
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ];
  return parseDatagram(Buffer.from(lines.join('\r\n'))) as SipRequest;
}

const REFER_CSEQ = 7;

describe('REFER subscription NOTIFYs (RFC 3515 sec. 2.4.4-2.4.6, RFC 6665 sec. 4.1.3, 8.2)', () => {
  it('a 1xx sipfrag is progress, with the subscription\'s expires', () => {
    const r = readReferNotify(notify(['Event: refer', 'Subscription-State: active;expires=60'], 'SIP/2.0 180 Ringing\r\n'), REFER_CSEQ);
    assert.deepEqual(r, { status: 200, news: { kind: 'progress', status: 180, expiresSeconds: 60 } });
  });

  it('a final sipfrag is the outcome, whatever the state says', () => {
    assert.deepEqual(readReferNotify(notify(['Event: refer', 'Subscription-State: terminated;reason=noresource'], 'SIP/2.0 200 OK'), REFER_CSEQ).news, { kind: 'final', status: 200, reason: 'OK' });
    assert.deepEqual(readReferNotify(notify(['Event: refer', 'Subscription-State: active;expires=10'], 'SIP/2.0 486 Busy Here'), REFER_CSEQ).news, { kind: 'final', status: 486, reason: 'Busy Here' });
  });

  it('terminated without a final status ends the subscription with its reason', () => {
    const r = readReferNotify(notify(['Event: refer', 'Subscription-State: terminated;reason=timeout'], 'SIP/2.0 100 Trying'), REFER_CSEQ);
    assert.deepEqual(r, { status: 200, news: { kind: 'terminated', reason: 'timeout' } });
    assert.deepEqual(readReferNotify(notify(['Event: refer', 'Subscription-State: terminated']), REFER_CSEQ).news, { kind: 'terminated', reason: undefined });
  });

  it('an id naming our REFER\'s CSeq is ours; another id is another subscription (481)', () => {
    assert.equal(readReferNotify(notify([`Event: refer;id=${REFER_CSEQ}`, 'Subscription-State: active'], 'SIP/2.0 100 Trying'), REFER_CSEQ).status, 200);
    assert.deepEqual(readReferNotify(notify(['Event: refer;id=3', 'Subscription-State: terminated'], 'SIP/2.0 200 OK'), REFER_CSEQ), { status: 481, reason: 'Subscription does not exist', news: undefined });
  });

  it('another event package gets 489 Bad Event with Allow-Events (RFC 6665 sec. 8.2.2)', () => {
    for (const event of ['Event: presence', 'Event: referx', undefined]) {
      const r = readReferNotify(notify(event ? [event, 'Subscription-State: active'] : ['Subscription-State: active']), REFER_CSEQ);
      assert.deepEqual(r, { status: 489, reason: 'Bad Event', headers: [['Allow-Events', 'refer']], news: undefined }, String(event));
    }
  });

  it('a NOTIFY without Subscription-State, or with a malformed one, is 400 (RFC 6665 sec. 8.2.3)', () => {
    assert.deepEqual(readReferNotify(notify(['Event: refer'], 'SIP/2.0 200 OK'), REFER_CSEQ), { status: 400, reason: 'Missing Subscription-State', news: undefined });
    assert.equal(readReferNotify(notify(['Event: refer', 'Subscription-State: active;='], 'SIP/2.0 200 OK'), REFER_CSEQ).reason, 'Bad Subscription-State');
  });

  it('a body that is not message/sipfrag gets 415 with Accept; a terminated state in it still counts', () => {
    const active = readReferNotify(notify(['Event: refer', 'Subscription-State: active'], 'SIP/2.0 200 OK', 'text/plain'), REFER_CSEQ);
    assert.deepEqual(active, { status: 415, reason: 'Unsupported Media Type', headers: [['Accept', 'message/sipfrag']], news: undefined });
    const ended = readReferNotify(notify(['Event: refer', 'Subscription-State: terminated;reason=rejected'], '{}', 'application/json'), REFER_CSEQ);
    assert.deepEqual(ended.news, { kind: 'terminated', reason: 'rejected' });
  });

  it('a sipfrag without a status line is 400', () => {
    assert.deepEqual(readReferNotify(notify(['Event: refer', 'Subscription-State: active'], 'INVITE sip:x@y SIP/2.0'), REFER_CSEQ), { status: 400, reason: 'Bad message/sipfrag', news: undefined });
  });
});

// Reference UAS for bench/sip-uas-load.ts, built on the npm `sip` 0.0.6 package (its transaction
// and transport layers): answers INVITE 200 with a minimal SDP answer, BYE 200, anything else 405.
// Started by the bench as a child process: argv[2] is the UDP port; it reports its CPU time over IPC.
import { randomBytes } from 'node:crypto';
import sip from 'sip';

const port = Number(process.argv[2]);
const sdp = ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 40000 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', ''].join('\r\n');
let answered = 0;

sip.start({ port, address: '127.0.0.1', tcp: false }, (rq) => {
  if (rq.method === 'ACK') return;
  if (rq.method === 'INVITE') {
    const rs = sip.makeResponse(rq, 200, 'OK', {
      headers: { contact: [{ uri: `sip:uas@127.0.0.1:${port}` }], 'content-type': 'application/sdp' },
      content: sdp,
    });
    rs.headers.to = { ...rq.headers.to, params: { ...rq.headers.to.params, tag: randomBytes(4).toString('hex') } };
    answered += 1;
    sip.send(rs);
  } else if (rq.method === 'BYE') {
    sip.send(sip.makeResponse(rq, 200, 'OK'));
  } else {
    sip.send(sip.makeResponse(rq, 405, 'Method Not Allowed'));
  }
});

process.on('message', (m) => {
  if (m === 'stats') process.send?.({ cpu: process.cpuUsage(), answered });
  if (m === 'stop') process.exit(0);
});
process.once('SIGINT', () => process.exit(0));
process.send?.({ ready: port });

import assert from 'node:assert/strict';
import { recordedEndReason } from './run-record.js';

describe('call record end reason', () => {
  it('a run stopped by the call ending takes the reason of the gateway limit or event that ended it', () => {
    assert.equal(recordedEndReason('callerHangup', 'caller-silence'), 'silenceTimeout');
    assert.equal(recordedEndReason('callerHangup', 'max-duration'), 'maxDuration');
    assert.equal(recordedEndReason('callerHangup', 'media-timeout'), 'mediaTimeout');
    assert.equal(recordedEndReason('callerHangup', 'session-expired'), 'sessionExpired');
    assert.equal(recordedEndReason('callerHangup', 'transferred'), 'transferred');
  });

  it('a real hang-up, an unknown or missing gateway reason, and runs that ended by themselves keep the run reason', () => {
    assert.equal(recordedEndReason('callerHangup', 'remote-bye'), 'callerHangup');
    assert.equal(recordedEndReason('callerHangup', undefined), 'callerHangup');
    assert.equal(recordedEndReason('closed', 'agent-closed'), 'closed');
    assert.equal(recordedEndReason('closed', 'caller-silence'), 'closed');
  });
});

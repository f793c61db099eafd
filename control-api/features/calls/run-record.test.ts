import assert from 'node:assert/strict';
import { callEndFromRun, recordedEndReason } from './run-record.js';

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

describe('call record of a recipe run', () => {
  it('keeps the path the run took, each turn note without the block id its step names', () => {
    const end = callEndFromRun(
      {
        reason: 'closed',
        path: ['question', 'bye'],
        variables: {},
        transcript: [],
        steps: [
          { blockId: 'question', type: 'smartAi', exit: 'fallback', turns: [{ blockId: 'question', kind: 'reprompt', reason: 'noMatch', heard: 'maybe', confidence: 0.4 }, { blockId: 'question', kind: 'nudge', reason: 'silence' }] },
          { blockId: 'bye', type: 'close', end: 'closed', turns: [] },
        ],
      },
      { endedAt: new Date(0) },
    );
    assert.deepEqual(end.steps, [
      { blockId: 'question', type: 'smartAi', exit: 'fallback', turns: [{ kind: 'reprompt', reason: 'noMatch', heard: 'maybe', confidence: 0.4 }, { kind: 'nudge', reason: 'silence' }] },
      { blockId: 'bye', type: 'close', end: 'closed', turns: [] },
    ]);
  });
});

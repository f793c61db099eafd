export * from './abuse-guard.js';
export * from './call-session-timer.js';
export * from './e164.js';
export * from './invite-steps.js';
export * from './method-router.js';
export * from './sip-gateway.js';

export * from './server-request.js';
export * from './sip-error.js';
export * from './sip-stack.js';
export * from './stoppable-clock.js';

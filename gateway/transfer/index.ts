export * from './bridge.js';
export * from './gateway-call-transfer.js';
export * from './refer.js';

export * from './client.js';
export * from './keys.js';
export * from './server.js';
export * from './timers.js';
export * from './types.js';
export * from './table.js';

export * from './certificate.js';
export * from './stream.js';
export * from './transport-set.js';
export * from './types.js';
export * from './udp.js';
export * from './websocket.js';

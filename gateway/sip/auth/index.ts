export * from './auth-params.js';
export * from './digest.js';
export * from './digest-client.js';
export * from './digest-server.js';

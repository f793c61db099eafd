export * from './call.js';
export * from './call-registry.js';

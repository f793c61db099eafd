export * from './invite-client.js';
export * from './sip-originator.js';

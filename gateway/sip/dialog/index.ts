export * from './dialog.js';
export * from './dialog-table.js';

import type { BlockRegistry } from '../runtime/recipe-run.js';
import { apiBlock } from './api.js';
import { askBlock } from './ask.js';
import { closeBlock } from './close.js';
import { codeBlock } from './code.js';
import { conditionBlock } from './condition.js';
import { messageBlock } from './message.js';
import { smartAiBlock } from './smart-ai.js';
import { transferBlock } from './transfer.js';
import { webhookBlock } from './webhook.js';

/** Every block type the runtime knows; a new block is a new module here, never a runner change. */
export const defaultBlocks: BlockRegistry = {
  message: messageBlock,
  smartAi: smartAiBlock,
  ask: askBlock,
  condition: conditionBlock,
  code: codeBlock,
  api: apiBlock,
  webhook: webhookBlock,
  transfer: transferBlock,
  close: closeBlock,
};

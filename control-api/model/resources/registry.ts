import { createSecretBox, type SecretBox } from '../../platform/crypto/secret-box.js';
import { authProfileDefinition } from './definitions/auth-profile.js';
import { businessHoursDefinition } from './definitions/business-hours.js';
import { campaignDefinition } from './definitions/campaign.js';
import { knowledgeDocumentDefinition } from './definitions/knowledge-document.js';
import { phoneNumberDefinition } from './definitions/phone-number.js';
import { pronunciationEntryDefinition } from './definitions/pronunciation-entry.js';
import { recipeDefinition } from './definitions/recipe.js';
import { sipTrunkDefinition } from './definitions/sip-trunk.js';
import { speechProfileDefinition } from './definitions/speech-profile.js';
import type { ResourceDefinition } from './resource-definition.js';

/**
 * Every tenant-scoped resource kind, in dependency order (a kind only references kinds listed
 * before it). Built from the platform's secret key because several kinds seal secrets at rest.
 */
export function createResourceDefinitions(deps: { readonly secretKey: Buffer } | { readonly secretBox: SecretBox }) {
  const box = 'secretBox' in deps ? deps.secretBox : createSecretBox(deps.secretKey);
  const definitions = {
    businessHours: businessHoursDefinition(box),
    sipTrunk: sipTrunkDefinition(box),
    authProfile: authProfileDefinition(box),
    speechProfile: speechProfileDefinition(box),
    pronunciationEntry: pronunciationEntryDefinition(box),
    knowledgeDocument: knowledgeDocumentDefinition(box),
    recipe: recipeDefinition(box),
    phoneNumber: phoneNumberDefinition(box),
    campaign: campaignDefinition(box),
  };
  return {
    ...definitions,
    /** What the management API and `apply` iterate over. */
    all: Object.values(definitions) as readonly ResourceDefinition[],
  };
}

export type ResourceDefinitions = ReturnType<typeof createResourceDefinitions>;

/** The list form the management API consumes. */
export const resourceDefinitions = (deps: { readonly secretKey: Buffer } | { readonly secretBox: SecretBox }): readonly ResourceDefinition[] =>
  createResourceDefinitions(deps).all;
